import { legalFormCode } from './legal-forms.ts';
import type { MatchIndex } from './match-index.ts';
import type { AddressProfile, MatchProfile, QueryProfile } from './profile.ts';
import { tokenSimilarity } from './scoring.ts';
import { compactCode, tokenize } from './text.ts';
import { canonicalNameWord, canonicalStreetWord } from './vocabulary.ts';

// Free-text search (v3 search operation): name and address in one line, e.g.
// "Müller Logistik GmbH, Hauptstr. 5, 80331 München". Nothing says which word is what, so a
// record scores by how much of its name the text covers and how much of the text the record
// explains (name, street, number, post code, town).

/** Longest run of words tried as one identifier or post code ("DE 123 456 789", "SW1A 1AA"). */
const MAX_JOINED_WORDS = 4;
const RECORD_NAME_WEIGHT = 0.65;

export interface TextQuery {
  /** Profile for candidate collection: every word as a name token, found codes as such. */
  readonly profile: QueryProfile;
  /** Canonical name forms of the words, legal-form words and stop words left out. */
  readonly words: readonly string[];
  /** Each word in its canonical street form, to find it in a street. */
  readonly streetWords: readonly string[];
  readonly postCodes: readonly string[];
}

const NO_ADDRESS: AddressProfile = {
  street: undefined,
  houseNumber: undefined,
  postCode: undefined,
  town: undefined,
  region: undefined,
  country: undefined,
};

/** Runs of up to MAX_JOINED_WORDS consecutive words, compacted ("de 123 456 789" -> "DE123456789"). */
function joinedRuns(words: readonly string[]): string[] {
  const runs: string[] = [];
  for (let start = 0; start < words.length; start++) {
    for (let end = start + 1; end <= Math.min(words.length, start + MAX_JOINED_WORDS); end++) {
      runs.push(compactCode(words.slice(start, end).join('')));
    }
  }
  return runs;
}

export function parseTextQuery(text: string, index: MatchIndex): TextQuery {
  const raw = tokenize(text);
  const runs = joinedRuns(raw);
  const identifiers = [
    ...new Set(runs.filter((run) => /\d/.test(run) && index.identifierPostings(run) !== undefined)),
  ];
  const postCodes = [
    ...new Set(runs.filter((run) => /\d/.test(run) && run.length >= 4 && run.length <= 8)),
  ].filter((run) => index.countries.some((country) => index.postCodePostings(country, run) !== undefined));
  const words = raw
    .filter((word) => legalFormCode([word]) === undefined)
    .map(canonicalNameWord)
    .filter((word): word is string => word !== undefined);
  const profile: MatchProfile = {
    names: [{ tokens: words, key: words.join('') }],
    legalForm: undefined,
    identifiers,
    identifierTypes: identifiers.map(() => undefined),
    address: { ...NO_ADDRESS, postCode: postCodes[0] },
    country: undefined,
  };
  return {
    profile: { ...profile, swappedAddress: undefined },
    words,
    streetWords: raw.map((word) => canonicalStreetWord(word) ?? word),
    postCodes,
  };
}

function explainsWord(query: TextQuery, i: number, record: MatchProfile): boolean {
  const word = query.words[i] ?? '';
  if (record.names.some((name) => name.tokens.some((token) => tokenSimilarity(word, token) >= 0.85)))
    return true;
  const address = record.address;
  if (word === address.houseNumber || compactCode(word) === address.postCode) return true;
  if (address.town !== undefined && word.length >= 3 && address.town.includes(word)) return true;
  const streetWord = query.streetWords[i] ?? word;
  return address.street !== undefined && streetWord.length >= 3 && address.street.includes(streetWord);
}

/** Score of a record for a text query, 0..1. */
export function scoreTextMatch(
  query: TextQuery,
  record: MatchProfile,
  recordWeights: readonly (readonly number[])[],
): number {
  let nameCoverage = 0;
  record.names.forEach((name, n) => {
    let covered = 0;
    let total = 0;
    name.tokens.forEach((token, j) => {
      const weight = recordWeights[n]?.[j] ?? 1;
      let best = 0;
      for (const word of query.words) best = Math.max(best, tokenSimilarity(word, token));
      covered += weight * best;
      total += weight;
    });
    nameCoverage = Math.max(nameCoverage, total === 0 ? 0 : covered / total);
  });
  let explained = 0;
  for (let i = 0; i < query.words.length; i++) if (explainsWord(query, i, record)) explained++;
  const explainedShare = query.words.length === 0 ? 0 : explained / query.words.length;
  const score = RECORD_NAME_WEIGHT * nameCoverage ** 1.5 + (1 - RECORD_NAME_WEIGHT) * explainedShare;
  const identified = query.profile.identifiers.some((value) => record.identifiers.includes(value));
  return identified ? 0.95 + 0.05 * score : score;
}
