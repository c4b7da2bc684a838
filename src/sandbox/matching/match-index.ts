import type { LookupFeature } from './features.ts';
import type { MatchProfile } from './profile.ts';
import { profileCompleteness } from './profile.ts';
import { memoize } from './memo.ts';
import { editDistance } from './similarity.ts';

/** Record indexes in ascending order. */
export type Postings = readonly number[];

/** A (data source, storage) pair; filters are resolved per slot, not per record. */
export interface RecordSlot {
  readonly dataSourceId: string;
  /** Organizational data mirror the record lives in; undefined for the service's own sources. */
  readonly storageId: string | undefined;
  readonly activatedBy: LookupFeature | undefined;
}

/** Name tokens of one country: postings, and a deletion index to find misspelt tokens. */
export interface CountryTokens {
  readonly postings: ReadonlyMap<string, Postings>;
  /** Each token and its one-character deletions, mapped to the tokens they came from. */
  readonly deletions: ReadonlyMap<string, readonly string[]>;
  readonly recordCount: number;
}

export interface MatchIndexParts {
  readonly svcIds: readonly string[];
  readonly profiles: readonly MatchProfile[];
  readonly entityKeys: Int32Array;
  readonly slotOfRecord: Uint16Array;
  readonly slots: readonly RecordSlot[];
  readonly tokensByCountry: ReadonlyMap<string, CountryTokens>;
  /** Per country, post code to records. */
  readonly postCodes: ReadonlyMap<string, ReadonlyMap<string, Postings>>;
  readonly identifiers: ReadonlyMap<string, Postings>;
}

/** Shortest token worth a fuzzy lookup: one edit in a three-letter word makes a different word. */
export const MIN_FUZZY_TOKEN_LENGTH = 4;

const EMPTY: readonly string[] = [];
/** How many records an unknown token is assumed to occur in when weighting it. */
const UNCOMMON_TOKEN_RECORDS = 10;

/**
 * Blocking structures over every record, so that a lookup touches the few hundred records
 * sharing a name token, post code or identifier with the query instead of all of them.
 * Built once by buildMatchIndex; lookups only read it, apart from remembering similar tokens.
 */
export class MatchIndex {
  readonly size: number;
  readonly svcIds: readonly string[];
  readonly profiles: readonly MatchProfile[];
  /** Records with equal keys describe the same organization in different data sources. */
  readonly entityKeys: Int32Array;
  readonly slotOfRecord: Uint16Array;
  /** profileCompleteness of each record. */
  readonly completeness: Float64Array;
  readonly slots: readonly RecordSlot[];
  /** Countries with records, '' standing for records without a country. */
  readonly countries: readonly string[];
  readonly #tokensByCountry: ReadonlyMap<string, CountryTokens>;
  readonly #postCodes: ReadonlyMap<string, ReadonlyMap<string, Postings>>;
  readonly #identifiers: ReadonlyMap<string, Postings>;
  readonly #recordBySvcId: ReadonlyMap<string, number>;
  readonly #similar = new Map<string, (token: string) => readonly string[]>();

  constructor(parts: MatchIndexParts) {
    this.size = parts.svcIds.length;
    this.svcIds = parts.svcIds;
    this.profiles = parts.profiles;
    this.entityKeys = parts.entityKeys;
    this.slotOfRecord = parts.slotOfRecord;
    this.completeness = new Float64Array(parts.profiles.length);
    parts.profiles.forEach((profile, record) => (this.completeness[record] = profileCompleteness(profile)));
    this.slots = parts.slots;
    this.countries = [...parts.tokensByCountry.keys()];
    this.#tokensByCountry = parts.tokensByCountry;
    this.#postCodes = parts.postCodes;
    this.#identifiers = parts.identifiers;
    const recordBySvcId = new Map<string, number>();
    parts.svcIds.forEach((svcId, record) => recordBySvcId.set(svcId, record));
    this.#recordBySvcId = recordBySvcId;
  }

  recordIndexOf(svcId: string): number | undefined {
    return this.#recordBySvcId.get(svcId);
  }

  namePostings(country: string, token: string): Postings | undefined {
    return this.#tokensByCountry.get(country)?.postings.get(token);
  }

  /**
   * Inverse document frequency of a name token within its country: rare tokens ("Rheinwerk")
   * identify an organization, common ones ("Logistik") hardly do. Unknown tokens count as rare.
   */
  tokenWeight(country: string, token: string): number {
    const tokens = this.#tokensByCountry.get(country);
    const recordCount = tokens?.recordCount ?? this.size;
    const documentFrequency = tokens?.postings.get(token)?.length ?? 0;
    return Math.log(1 + recordCount / (1 + documentFrequency));
  }

  /** Weight of a token found in UNCOMMON_TOKEN_RECORDS records of `country`. */
  uncommonTokenWeight(country: string): number {
    const recordCount = this.#tokensByCountry.get(country)?.recordCount ?? this.size;
    return Math.log(1 + recordCount / (1 + UNCOMMON_TOKEN_RECORDS));
  }

  /** Known tokens of `country` within one edit of `token` (two for long tokens), `token` excluded. */
  similarTokens(country: string, token: string): readonly string[] {
    // Queries keep using the same words; remember the answer per country and word.
    let ofCountry = this.#similar.get(country);
    if (ofCountry === undefined)
      this.#similar.set(country, (ofCountry = memoize((word) => this.#findSimilar(country, word))));
    return ofCountry(token);
  }

  #findSimilar(country: string, token: string): readonly string[] {
    const deletions = this.#tokensByCountry.get(country)?.deletions;
    if (deletions === undefined || token.length < MIN_FUZZY_TOKEN_LENGTH) return EMPTY;
    const found = new Set<string>(deletions.get(token) ?? EMPTY);
    for (let i = 0; i < token.length; i++) {
      for (const known of deletions.get(token.slice(0, i) + token.slice(i + 1)) ?? EMPTY) found.add(known);
    }
    found.delete(token);
    const maxEdits = token.length >= 8 ? 2 : 1;
    return [...found].filter((known) => editDistance(token, known, maxEdits) <= maxEdits);
  }

  postCodePostings(country: string, postCode: string): Postings | undefined {
    return this.#postCodes.get(country)?.get(postCode);
  }

  identifierPostings(value: string): Postings | undefined {
    return this.#identifiers.get(value);
  }
}
