import { CandidateCollector } from './candidates.ts';
import { SandboxMatchingError } from './errors.ts';
import { activeFeatures } from './features.ts';
import { chooseGoldenRecord } from './golden-record.ts';
import type { MatchIndex } from './match-index.ts';
import type { LookupOptions, LookupOptionsInput } from './options.ts';
import { parseLookupOptions } from './options.ts';
import { compareRanked, pageOf } from './paging.ts';
import type { MatchProfile, NameProfile } from './profile.ts';
import { normalizeQuery } from './profile.ts';
import { RecordScorer } from './scoring.ts';
import { allowedSlots } from './source-filter.ts';
import { parseTextQuery, scoreTextMatch } from './text-search.ts';
import type { MatchSubject } from './subject.ts';

export interface MatchCandidate {
  readonly svcId: string;
  readonly dataSourceId: string;
  readonly storageId: string | undefined;
  /** 0..1, rounded to four decimals. */
  readonly score: number;
  /** Share of filled fields of the record, 0..1. */
  readonly completeness: number;
  /** Position in the index; the dataset resolves it to the stored record. */
  readonly recordIndex: number;
  /** Records with equal keys describe the same organization. */
  readonly entityKey: number;
}

export interface LookupPage {
  /** Candidates at or above the threshold, over all pages. */
  readonly total: number;
  readonly limit: number;
  readonly startAfter: string | undefined;
  readonly nextStartAfter: string | undefined;
  readonly values: readonly MatchCandidate[];
  readonly goldenRecord: MatchCandidate | undefined;
}

/**
 * Changes made to indexed records after the index was built (the sandbox's dataset
 * revisions), as one lookup sees them. The index itself stays as built, so token weights and
 * the candidates of every other lookup are what they were.
 */
export interface RecordRevision {
  /** A withdrawn record is never a candidate. */
  isWithdrawn(recordIndex: number): boolean;
  /** The record's svcId now; undefined when it kept the one it was indexed with. */
  svcIdOf(recordIndex: number): string | undefined;
  /** The score of `candidate` after its record's revision, in a lookup whose best candidate is `best`. */
  scoreBeside(best: MatchCandidate, candidate: MatchCandidate): number;
}

const SHORT_UNKNOWN_TOKEN_FACTOR = 0.25;
const SEARCH_CANDIDATE_FACTOR = 4;

const roundScore = (score: number): number => Math.round(score * 10_000) / 10_000;

function hasContent(profile: MatchProfile): boolean {
  const address = profile.address;
  return (
    profile.names.length > 0 ||
    profile.identifiers.length > 0 ||
    [address.street, address.postCode, address.town].some((part) => part !== undefined)
  );
}

/** The ranked candidates rescored by `revision`, in their new order. */
function rescore(
  ranked: MatchCandidate[],
  revision: RecordRevision,
  matchingThreshold: number,
): MatchCandidate[] {
  const best = ranked[0];
  if (best === undefined) return ranked;
  let changed = false;
  const rescored: MatchCandidate[] = [];
  for (const candidate of ranked) {
    const score = roundScore(revision.scoreBeside(best, candidate));
    if (score === candidate.score) rescored.push(candidate);
    else {
      changed = true;
      if (score >= matchingThreshold && score > 0) rescored.push({ ...candidate, score });
    }
  }
  return changed ? rescored.sort(compareRanked) : ranked;
}

/** Lookups over one index. Not reentrant: it reuses scratch arrays between lookups. */
export class Matcher {
  readonly #index: MatchIndex;
  readonly #collector: CandidateCollector;
  // Keyed by the record's names array: fixed for the index's lifetime and, like the record, of one country.
  readonly #weightsOfNames = new WeakMap<readonly NameProfile[], readonly (readonly number[])[]>();

  constructor(index: MatchIndex) {
    this.#index = index;
    this.#collector = new CandidateCollector(index);
  }

  /** Lookup by name, address and identifiers (v3/v4 lookup, bulk lookup tasks). */
  lookup(subject: MatchSubject, options?: LookupOptionsInput, revision?: RecordRevision): LookupPage {
    const parsed = parseLookupOptions(options);
    return this.#page(this.rank(subject, parsed, revision), parsed);
  }

  /** Free-text search: name and address in one line (v3 search). */
  search(text: string, options?: LookupOptionsInput, revision?: RecordRevision): LookupPage {
    const parsed = parseLookupOptions(options);
    const query = parseTextQuery(text, this.#index);
    if (query.words.length === 0 && query.profile.identifiers.length === 0) {
      throw new SandboxMatchingError('SANDBOX_EMPTY_QUERY', 'the search text has no word to look for', {
        details: { text },
      });
    }
    // Town words in the text count as name words when collecting candidates, and together
    // they can outweigh the name itself: consider more candidates than a structured lookup.
    const widened = { ...parsed, maxCandidates: parsed.maxCandidates * SEARCH_CANDIDATE_FACTOR };
    const ranked = this.#rankWith(
      query.profile,
      widened,
      false,
      (record, country) => scoreTextMatch(query, record, this.#recordWeights(record.names, country)),
      revision,
    );
    return this.#page(ranked, parsed);
  }

  /** Every candidate at or above the threshold, best first. */
  rank(subject: MatchSubject, options: LookupOptions, revision?: RecordRevision): MatchCandidate[] {
    const query = normalizeQuery(subject);
    if (!hasContent(query)) {
      throw new SandboxMatchingError('SANDBOX_EMPTY_QUERY', 'the query has no name, identifier or address', {
        details: { subject },
      });
    }
    const identifierOnly = activeFeatures(options.featuresOn, options.featuresOff).has(
      'ACTIVATE_IDENTIFIER_ONLY_MATCH',
    );
    const queryWeights = new Map<string, number[][]>();
    const scorer = new RecordScorer(
      query,
      {
        ofQuery: (country) => {
          let weights = queryWeights.get(country);
          if (weights === undefined)
            queryWeights.set(country, (weights = this.#queryWeights(query.names, country)));
          return weights;
        },
        ofRecord: (names, country) => this.#recordWeights(names, country),
      },
      identifierOnly,
    );
    return this.#rankWith(query, options, identifierOnly, (record) => scorer.score(record), revision);
  }

  #rankWith(
    query: MatchProfile,
    options: LookupOptions,
    identifierOnly: boolean,
    score: (record: MatchProfile, country: string) => number,
    revision: RecordRevision | undefined,
  ): MatchCandidate[] {
    const features = activeFeatures(options.featuresOn, options.featuresOff);
    const allowed = allowedSlots(this.#index.slots, features, options);
    const records = this.#collector.collect(query, allowed, options.maxCandidates, identifierOnly);
    const ranked: MatchCandidate[] = [];
    for (const recordIndex of records) {
      const record = this.#index.profiles[recordIndex];
      if (record === undefined || revision?.isWithdrawn(recordIndex) === true) continue;
      const value = roundScore(score(record, record.country ?? ''));
      if (value >= options.matchingThreshold && value > 0)
        ranked.push(this.#candidate(recordIndex, value, revision));
    }
    ranked.sort(compareRanked);
    return revision === undefined ? ranked : rescore(ranked, revision, options.matchingThreshold);
  }

  #page(ranked: readonly MatchCandidate[], options: LookupOptions): LookupPage {
    const page = pageOf(ranked, options.limit, options.startAfter);
    return {
      total: ranked.length,
      limit: options.limit,
      startAfter: options.startAfter,
      nextStartAfter: page.nextStartAfter,
      values: page.values,
      goldenRecord: chooseGoldenRecord(ranked),
    };
  }

  #candidate(recordIndex: number, score: number, revision: RecordRevision | undefined): MatchCandidate {
    const index = this.#index;
    const slot = index.slots[index.slotOfRecord[recordIndex] ?? 0];
    return {
      svcId: revision?.svcIdOf(recordIndex) ?? index.svcIds[recordIndex] ?? '',
      dataSourceId: slot?.dataSourceId ?? '',
      storageId: slot?.storageId,
      score,
      completeness: index.completeness[recordIndex] ?? 0,
      recordIndex,
      entityKey: index.entityKeys[recordIndex] ?? -1,
    };
  }

  /** Token weights of a record's names; records of one organization share them, so they are kept. */
  #recordWeights(names: readonly NameProfile[], country: string): readonly (readonly number[])[] {
    let weights = this.#weightsOfNames.get(names);
    if (weights === undefined) {
      weights = names.map((name) => name.tokens.map((token) => this.#index.tokenWeight(country, token)));
      this.#weightsOfNames.set(names, weights);
    }
    return weights;
  }

  /**
   * A misspelt query token weighs what the token it resembles weighs. A token unlike any known
   * one weighs like an uncommon word, not like the rarest: it is as likely garbled as telling.
   */
  #queryWeights(names: readonly NameProfile[], country: string): number[][] {
    const index = this.#index;
    return names.map((name) =>
      name.tokens.map((token) => {
        if (index.namePostings(country, token) !== undefined) return index.tokenWeight(country, token);
        const similar = index.similarTokens(country, token)[0];
        if (similar !== undefined) return index.tokenWeight(country, similar);
        // A short unknown word is most often a mangled legal form or abbreviation ("S.n.b.").
        return index.uncommonTokenWeight(country) * (token.length <= 3 ? SHORT_UNKNOWN_TOKEN_FACTOR : 1);
      }),
    );
  }
}
