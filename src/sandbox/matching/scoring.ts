import { AddressComparer } from './address-similarity.ts';
import type { MatchProfile, NameProfile, QueryProfile } from './profile.ts';
import { editDistance, editSimilarity } from './similarity.ts';

/**
 * Tuning of the score, in one place, set by measuring with bench/matching/quality.ts (precision
 * and recall of the best match, and false positives for absent organizations).
 */
const SCORING = {
  /**
   * Name similarity is raised to this power: one misspelt word of three costs little, a whole
   * different word (same surname, other trade) costs much, which separates namesakes.
   */
  nameExponent: 1.5,
  /** How far a fully contradicting address (similarity 0) pulls the name score down. */
  addressInfluence: 0.6,
  /** A name without any address to confirm it reaches at most this score. */
  nameOnlyCeiling: 0.9,
  /** Below this address similarity, with most of the address compared, the address contradicts. */
  contradictionBelow: 0.35,
  contradictionFactor: 0.75,
  /** Same name, different legal form ("GmbH" vs "AG") is often a sister company. */
  legalFormMismatchFactor: 0.9,
  /** Different countries: almost certainly a different organization. */
  countryMismatchFactor: 0.3,
  /** An exact identifier match scores at least this, whatever the name says. */
  identifierMatchFloor: 0.95,
  /** Both sides hold a number of the same type, and the numbers differ. */
  identifierConflictFactor: 0.7,
  /** Without any name in the query the address alone decides, and it decides weakly. */
  addressOnlyCeiling: 0.8,
} as const;

/**
 * Similarity of two name tokens: equal, one or two slips apart (two only in long words), or an
 * abbreviation ("Techn" for "Technik"). Three-letter words count for less: one slip turns many
 * of them into another real word.
 */
export function tokenSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  const shorter = a.length <= b.length ? a : b;
  const longer = shorter === a ? b : a;
  if (shorter.length < 3) return 0;
  const maxEdits = shorter.length >= 7 ? 2 : 1;
  const distance = editDistance(a, b, maxEdits);
  if (distance === 1) return shorter.length >= 4 ? 0.85 : 0.6;
  if (distance === 2 && maxEdits === 2) return 0.7;
  if (!longer.startsWith(shorter)) return 0;
  return shorter.length >= 4 ? 0.7 : 0.6;
}

let bestForRecordToken = new Float64Array(16);

/** Similarity of query token `i` to a record token; see NameComparer for a remembering one. */
type TokenSimilarityOf = (i: number, recordToken: string) => number;

/**
 * Weighted soft overlap of the two token sets (harmonic mean of the share of each side's
 * weight that finds a similar token on the other), or the similarity of the names written
 * without spaces when that is higher ("Nord Tec" vs "Nordtec").
 */
function nameSimilarity(
  query: NameProfile,
  queryWeights: readonly number[],
  record: NameProfile,
  recordWeights: readonly number[],
  similarityOf: TokenSimilarityOf = (i, token) => tokenSimilarity(query.tokens[i] ?? '', token),
): number {
  if (query.key === record.key) return 1;
  if (bestForRecordToken.length < record.tokens.length)
    bestForRecordToken = new Float64Array(record.tokens.length * 2);
  bestForRecordToken.fill(0, 0, record.tokens.length);
  let queryMatched = 0;
  let queryTotal = 0;
  for (let i = 0; i < query.tokens.length; i++) {
    let best = 0;
    record.tokens.forEach((recordToken, j) => {
      const similarity = similarityOf(i, recordToken);
      if (similarity > best) best = similarity;
      if (similarity > (bestForRecordToken[j] ?? 0)) bestForRecordToken[j] = similarity;
    });
    const weight = queryWeights[i] ?? 1;
    queryMatched += weight * best;
    queryTotal += weight;
  }
  let recordMatched = 0;
  let recordTotal = 0;
  record.tokens.forEach((_, j) => {
    const weight = recordWeights[j] ?? 1;
    recordMatched += weight * (bestForRecordToken[j] ?? 0);
    recordTotal += weight;
  });
  const queryShare = queryTotal === 0 ? 0 : queryMatched / queryTotal;
  const recordShare = recordTotal === 0 ? 0 : recordMatched / recordTotal;
  const tokenScore =
    queryShare + recordShare === 0 ? 0 : (2 * queryShare * recordShare) / (queryShare + recordShare);
  if (tokenScore >= 0.95) return tokenScore;
  // Written together, names compare across a lost or added space ("Nord Tec" for "Nordtec")
  // and a word with two slips; only near-identical spellings count, not a long shared ending
  // ("...medizintechnik").
  return Math.max(tokenScore, editSimilarity(query.key, record.key, 0.15));
}

/** Token weights (see MatchIndex.tokenWeight) the scorer needs, per name, in a country. */
export interface TokenWeights {
  ofQuery(country: string): readonly (readonly number[])[];
  ofRecord(names: readonly NameProfile[], country: string): readonly (readonly number[])[];
}

function sharesIdentifier(query: MatchProfile, record: MatchProfile): boolean {
  return query.identifiers.some((value) => record.identifiers.includes(value));
}

/** Both hold a number of the same type and the numbers differ. */
function conflictingIdentifier(query: MatchProfile, record: MatchProfile): boolean {
  return query.identifierTypes.some((type, i) => {
    if (type === undefined) return false;
    let sameType = false;
    for (let j = 0; j < record.identifierTypes.length; j++) {
      if (record.identifierTypes[j] !== type) continue;
      if (record.identifiers[j] === query.identifiers[i]) return false;
      sameType = true;
    }
    return sameType;
  });
}

/**
 * Scores records for one query, 0..1. One per lookup: it remembers what the candidates share
 * (an organization's records share their names, many candidates share words and streets).
 */
export class RecordScorer {
  readonly #query: QueryProfile;
  readonly #weights: TokenWeights;
  readonly #identifierOnly: boolean;
  readonly #address: AddressComparer;
  readonly #nameScores = new Map<readonly NameProfile[], number>();
  /** Per query name: similarity of its tokens to record tokens, remembered per record token. */
  readonly #tokenSimilarities: readonly TokenSimilarityOf[];

  constructor(query: QueryProfile, weights: TokenWeights, identifierOnly: boolean) {
    this.#query = query;
    this.#weights = weights;
    this.#identifierOnly = identifierOnly;
    this.#address = new AddressComparer(query);
    this.#tokenSimilarities = query.names.map((name) => {
      const memos = name.tokens.map(() => new Map<string, number>());
      return (i, recordToken) => {
        const memo = memos[i];
        let similarity = memo?.get(recordToken);
        if (similarity === undefined) {
          similarity = tokenSimilarity(name.tokens[i] ?? '', recordToken);
          memo?.set(recordToken, similarity);
        }
        return similarity;
      };
    });
  }

  score(record: MatchProfile): number {
    const query = this.#query;
    const identified = sharesIdentifier(query, record);
    if (this.#identifierOnly) return identified ? 1 : 0;
    const address = this.#address.compare(record.address);
    let score: number;
    if (query.names.length === 0) {
      score = SCORING.addressOnlyCeiling * address.similarity * address.coverage;
    } else {
      let name = this.#nameScore(record) ** SCORING.nameExponent;
      if (
        query.legalForm !== undefined &&
        record.legalForm !== undefined &&
        query.legalForm !== record.legalForm
      ) {
        name *= SCORING.legalFormMismatchFactor;
      }
      const ceiling = SCORING.nameOnlyCeiling + (1 - SCORING.nameOnlyCeiling) * address.coverage;
      score = name * (1 - SCORING.addressInfluence * address.coverage * (1 - address.similarity)) * ceiling;
      if (address.coverage >= 0.5 && address.similarity < SCORING.contradictionBelow) {
        score *= SCORING.contradictionFactor;
      }
    }
    if (query.country !== undefined && record.country !== undefined && query.country !== record.country) {
      score *= SCORING.countryMismatchFactor;
    }
    if (identified) return SCORING.identifierMatchFloor + (1 - SCORING.identifierMatchFloor) * score;
    return conflictingIdentifier(query, record) ? score * SCORING.identifierConflictFactor : score;
  }

  /** The best similarity of any query name to any of the record's names. */
  #nameScore(record: MatchProfile): number {
    const known = this.#nameScores.get(record.names);
    if (known !== undefined) return known;
    const country = record.country ?? '';
    const queryWeights = this.#weights.ofQuery(country);
    const recordWeights = this.#weights.ofRecord(record.names, country);
    let best = 0;
    this.#query.names.forEach((queryName, n) => {
      const similarityOf = this.#tokenSimilarities[n];
      record.names.forEach((recordName, r) => {
        const similarity = nameSimilarity(
          queryName,
          queryWeights[n] ?? [],
          recordName,
          recordWeights[r] ?? [],
          similarityOf,
        );
        best = Math.max(best, similarity);
      });
    });
    this.#nameScores.set(record.names, best);
    return best;
  }
}
