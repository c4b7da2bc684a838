import type { MatchIndex, Postings } from './match-index.ts';
import type { MatchProfile } from './profile.ts';

// Blocking: a cheap pre-score over the index postings picks the records worth a full score.
// A shared identifier outweighs everything. Name tokens count by the square of their rarity
// weight, so that one rare word shared outranks several common ones ("Eifeldata Lebensmittel"
// against "... Lebensmittel Frankfurt am Main"); a misspelt token counts a little less; the
// post code adds as much as a common word, so that a badly misspelt name at the right address
// still gets in.
const IDENTIFIER_WEIGHT = 10_000;
const SIMILAR_TOKEN_FACTOR = 0.7;
const POST_CODE_WEIGHT = 16;
/** Postings up to this length bring new candidates in; longer ones only add to known candidates. */
const CANDIDATE_SOURCE_LIMIT = 400;
/** Share of the best pre-score a record needs to be ranked at all. */
const MIN_SHARE_OF_BEST = 0.25;
/** Scores are packed with the record index into one sortable number; see `select`. */
const RECORD_INDEX_BITS = 2 ** 23;

interface WeightedPostings {
  readonly postings: Postings;
  readonly weight: number;
}

const byLength = (a: WeightedPostings, b: WeightedPostings): number => a.postings.length - b.postings.length;

/**
 * Collects candidate record indexes for one query at a time. Owns scratch arrays sized to the
 * index, so it is reused across lookups (lookups are synchronous, one at a time).
 */
export class CandidateCollector {
  readonly #index: MatchIndex;
  readonly #preScores: Float64Array;
  readonly #touched: Int32Array;
  readonly #keys: Float64Array;
  #touchedCount = 0;

  constructor(index: MatchIndex) {
    if (index.size >= RECORD_INDEX_BITS)
      throw new RangeError(`index of ${index.size} records is too large to rank`);
    this.#index = index;
    this.#preScores = new Float64Array(index.size);
    this.#touched = new Int32Array(index.size);
    this.#keys = new Float64Array(index.size);
  }

  /** At most `max` allowed records, best pre-score first. */
  collect(query: MatchProfile, allowed: Uint8Array, max: number, identifiersOnly: boolean): Int32Array {
    for (const value of query.identifiers)
      this.#add(this.#index.identifierPostings(value), IDENTIFIER_WEIGHT);
    if (!identifiersOnly) {
      const countries = query.country === undefined ? this.#index.countries : [query.country];
      for (const country of countries) this.#addCountry(query, country);
    }
    return this.#select(allowed, max);
  }

  #addCountry(query: MatchProfile, country: string): void {
    const index = this.#index;
    const exactLists: WeightedPostings[] = [];
    const otherLists: WeightedPostings[] = [];
    for (const token of new Set(query.names.flatMap((name) => name.tokens))) {
      const exact = index.namePostings(country, token);
      if (exact !== undefined)
        exactLists.push({ postings: exact, weight: index.tokenWeight(country, token) ** 2 });
      for (const similar of index.similarTokens(country, token)) {
        const postings = index.namePostings(country, similar);
        const weight = SIMILAR_TOKEN_FACTOR * index.tokenWeight(country, similar) ** 2;
        if (postings !== undefined) otherLists.push({ postings, weight });
      }
    }
    const postCode = query.address.postCode;
    const postCodePostings = postCode === undefined ? undefined : index.postCodePostings(country, postCode);
    if (postCodePostings !== undefined)
      otherLists.push({ postings: postCodePostings, weight: POST_CODE_WEIGHT });
    // Rare words and the post code bring candidates in; common words ("Logistik", a town)
    // only add to candidates already in, or a lookup would rank thousands of records. The
    // rarest word written as in the query always brings its records in, so that a query of
    // common words, or one whose rare word resembles another rare word, still finds its record.
    exactLists.sort(byLength);
    const rarestExact = exactLists[0];
    const lists = [...exactLists, ...otherLists].sort(byLength);
    for (const list of lists) {
      if (list === rarestExact || list.postings.length <= CANDIDATE_SOURCE_LIMIT)
        this.#add(list.postings, list.weight);
    }
    for (const list of lists) {
      if (list !== rarestExact && list.postings.length > CANDIDATE_SOURCE_LIMIT)
        this.#addToKnown(list.postings, list.weight);
    }
  }

  #add(postings: Postings | undefined, weight: number): void {
    if (postings === undefined) return;
    const preScores = this.#preScores;
    for (const record of postings) {
      if (preScores[record] === 0) this.#touched[this.#touchedCount++] = record;
      preScores[record] = (preScores[record] ?? 0) + weight;
    }
  }

  #addToKnown(postings: Postings, weight: number): void {
    const preScores = this.#preScores;
    for (const record of postings) {
      const preScore = preScores[record] ?? 0;
      if (preScore > 0) preScores[record] = preScore + weight;
    }
  }

  /** Picks the best allowed records and resets the scratch arrays for the next query. */
  #select(allowed: Uint8Array, max: number): Int32Array {
    const preScores = this.#preScores;
    const touched = this.#touched;
    const slotOfRecord = this.#index.slotOfRecord;
    let best = 0;
    for (let i = 0; i < this.#touchedCount; i++) {
      const record = touched[i] ?? 0;
      if (allowed[slotOfRecord[record] ?? 0] !== 1) preScores[record] = -1;
      // The floor is set by the name and address evidence: an identifier hit must not push
      // out every record that only resembles the query.
      else best = Math.max(best, (preScores[record] ?? 0) % IDENTIFIER_WEIGHT);
    }
    // Records far behind the best pre-score cannot catch up in the full score; dropping them
    // before sorting keeps a query sharing only a common word with thousands of records cheap.
    const floor = best * MIN_SHARE_OF_BEST;
    // Pre-score (1/1024 steps) and reversed record index packed in one float64: one native
    // numeric sort ranks by score, then by record index for ties, without a comparator.
    let count = 0;
    for (let i = 0; i < this.#touchedCount; i++) {
      const record = touched[i] ?? 0;
      const preScore = preScores[record] ?? 0;
      if (preScore >= floor && preScore > 0) {
        this.#keys[count++] =
          Math.round(preScore * 1024) * RECORD_INDEX_BITS + (RECORD_INDEX_BITS - 1 - record);
      }
      preScores[record] = 0;
    }
    this.#touchedCount = 0;
    const ranked = this.#keys.subarray(0, count).sort();
    const take = Math.min(max, count);
    const selected = new Int32Array(take);
    for (let i = 0; i < take; i++) {
      const key = ranked[count - 1 - i] ?? 0;
      selected[i] = RECORD_INDEX_BITS - 1 - (key % RECORD_INDEX_BITS);
    }
    return selected;
  }
}
