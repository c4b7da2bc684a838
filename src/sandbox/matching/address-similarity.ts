import type { AddressProfile, QueryProfile } from './profile.ts';
import { editSimilarity } from './similarity.ts';

// Address similarity: post code, town and street (with house number) compared part by part,
// over the parts both sides have. Weights favour the street and post code, which single out
// a building; the town only narrows the search.

const ADDRESS_WEIGHTS = { postCode: 0.35, town: 0.2, street: 0.45 } as const;

function postCodeSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  if (Math.min(a.length, b.length) >= 4 && (a.startsWith(b) || b.startsWith(a))) return 0.9;
  return a.slice(0, 3) === b.slice(0, 3) ? 0.3 : 0;
}

function townSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  if (Math.min(a.length, b.length) >= 4 && (a.startsWith(b) || b.startsWith(a))) return 0.9;
  return editSimilarity(a, b, 0.25);
}

function houseNumberSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  const leadingA = /^\d+/.exec(a)?.[0];
  return leadingA !== undefined && leadingA === /^\d+/.exec(b)?.[0] ? 0.8 : 0;
}

export interface AddressComparison {
  /** Similarity of the compared parts, 0..1. */
  readonly similarity: number;
  /** Share of the address weight that both sides had, 0..1. */
  readonly coverage: number;
}

/** Street and town similarities of one reading of the query's address, remembered per record value. */
class ReadingComparer {
  readonly #query: AddressProfile;
  // A lookup's candidates share few streets and fewer towns; compare each value once.
  readonly #streets = new Map<string, number>();
  readonly #towns = new Map<string, number>();

  constructor(query: AddressProfile) {
    this.#query = query;
  }

  compare(record: AddressProfile): AddressComparison {
    const query = this.#query;
    let weighted = 0;
    let coverage = 0;
    if (query.postCode !== undefined && record.postCode !== undefined) {
      weighted += ADDRESS_WEIGHTS.postCode * postCodeSimilarity(query.postCode, record.postCode);
      coverage += ADDRESS_WEIGHTS.postCode;
    }
    if (query.town !== undefined && record.town !== undefined) {
      weighted += ADDRESS_WEIGHTS.town * remembered(this.#towns, query.town, record.town, townSimilarity);
      coverage += ADDRESS_WEIGHTS.town;
    }
    if (query.street !== undefined && record.street !== undefined) {
      let similarity = remembered(this.#streets, query.street, record.street, streetSimilarity);
      // The house number only tells something once the street agrees.
      if (query.houseNumber !== undefined && record.houseNumber !== undefined) {
        similarity *= 0.7 + 0.3 * houseNumberSimilarity(query.houseNumber, record.houseNumber);
      }
      weighted += ADDRESS_WEIGHTS.street * similarity;
      coverage += ADDRESS_WEIGHTS.street;
    }
    return { similarity: coverage === 0 ? 0 : weighted / coverage, coverage };
  }
}

const streetSimilarity = (a: string, b: string): number => editSimilarity(a, b, 0.34);

function remembered(
  memo: Map<string, number>,
  query: string,
  record: string,
  similarity: (a: string, b: string) => number,
): number {
  let value = memo.get(record);
  if (value === undefined) memo.set(record, (value = similarity(query, record)));
  return value;
}

/**
 * Compares one query's address with records' addresses, read as given or with street and
 * town swapped, whichever agrees better. One per lookup.
 */
export class AddressComparer {
  readonly #asGiven: ReadingComparer;
  readonly #asSwapped: ReadingComparer | undefined;

  constructor(query: QueryProfile) {
    this.#asGiven = new ReadingComparer(query.address);
    this.#asSwapped =
      query.swappedAddress === undefined ? undefined : new ReadingComparer(query.swappedAddress);
  }

  compare(record: AddressProfile): AddressComparison {
    const asGiven = this.#asGiven.compare(record);
    if (this.#asSwapped === undefined || asGiven.similarity === 1) return asGiven;
    const asSwapped = this.#asSwapped.compare(record);
    return asSwapped.similarity > asGiven.similarity ? asSwapped : asGiven;
  }
}
