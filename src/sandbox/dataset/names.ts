import type { NameProfile } from '../matching/profile.ts';
import { canonicalNameWords } from '../matching/profile.ts';
import { tokenize } from '../matching/text.ts';
import type { CountryCode, CountryProfile } from './countries/index.ts';
import type { Random } from './random.ts';

// Organization names from parts (surnames, trades, brands, towns) of the country's lists.
// Each part's normalisation is computed once and shared, so a name's normalisation is the
// concatenation of its parts', without tokenising 100,000 names; a dataset test checks it
// equals normalising the whole name.

export interface GeneratedName {
  /** Without legal form, e.g. "Müller Logistik". */
  readonly name: string;
  /** NACE Rev. 2 section letter of the trade in the name, or of a trade drawn for it. */
  readonly industry: string;
  /** The matcher's normalisation of `name`. */
  readonly normalized: NameProfile;
}

/** Attempts at a fresh name before a numeral is appended to make it unique. */
const NAME_ATTEMPTS = 40;
const NUMERALS = ['II', 'III', 'IV', 'V', 'VI', 'VII', 'VIII', 'IX', 'X'];

const PART_TOKENS = new Map<string, readonly string[]>();

function tokensOf(part: string): readonly string[] {
  let tokens = PART_TOKENS.get(part);
  if (tokens === undefined) PART_TOKENS.set(part, (tokens = canonicalNameWords(tokenize(part))));
  return tokens;
}

function nameOf(parts: readonly string[], industry: string): GeneratedName {
  const tokens: string[] = [];
  for (const part of parts) for (const token of tokensOf(part)) tokens.push(token);
  return { name: parts.join(' '), industry, normalized: { tokens, key: tokens.join('') } };
}

/** The tokens in sorted order, so that "A & B" and "B und A" are one name. */
function sortedTokens(tokens: readonly string[]): string {
  const [first = '', second = ''] = tokens;
  if (tokens.length <= 1) return first;
  if (tokens.length === 2) return first < second ? `${first} ${second}` : `${second} ${first}`;
  return [...tokens].sort().join(' ');
}

type Pattern = (profile: CountryProfile, random: Random, town: string) => GeneratedName;

const brand = (p: CountryProfile, r: Random): string => r.pick(p.brandPrefixes) + r.pick(p.brandSuffixes);

function withTrade(
  head: readonly string[],
  p: CountryProfile,
  r: Random,
  tail: readonly string[] = [],
): GeneratedName {
  const trade = r.pick(p.industries);
  return nameOf([...head, trade.word, ...tail], trade.nace);
}

function surnamePair(p: CountryProfile, r: Random): GeneratedName {
  const first = r.pick(p.surnames);
  let second = r.pick(p.surnames);
  while (second === first) second = r.pick(p.surnames);
  return nameOf([first, r.pick(p.conjunctions), second], r.pick(p.industries).nace);
}

// Weights follow each pattern's number of distinct names, so that drawing a name that is
// already taken stays rare even at 100,000 organizations.
const PATTERNS: readonly { weight: number; make: Pattern }[] = [
  { weight: 12, make: (p, r) => withTrade([r.pick(p.surnames)], p, r) },
  { weight: 12, make: surnamePair },
  { weight: 30, make: (p, r) => withTrade([brand(p, r)], p, r) },
  { weight: 3, make: (p, r) => nameOf([brand(p, r)], r.pick(p.industries).nace) },
  { weight: 2, make: (p, r) => nameOf([p.familyTemplate.replace('{surname}', r.pick(p.surnames))], 'G') },
  { weight: 41, make: (p, r, town) => withTrade([r.pick(p.surnames)], p, r, [town]) },
];

/**
 * Names that differ after the matcher's normalisation, per country: two organizations the
 * matcher could not tell apart by name would make the benchmark's ground truth ambiguous.
 */
export class UniqueNames {
  readonly #taken = new Set<string>();

  generate(profile: CountryProfile, town: string, random: Random): GeneratedName {
    let candidate: GeneratedName | undefined;
    for (let attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
      candidate = random.weighted(PATTERNS).make(profile, random, town);
      if (this.#claim(profile.code, candidate)) return candidate;
    }
    // The country's name space is crowded: number the name, as registers do with successors.
    const crowded = candidate ?? nameOf([town], 'G');
    for (const suffix of [...NUMERALS, String(this.#taken.size)]) {
      const numbered = nameOf([crowded.name, suffix], crowded.industry);
      if (this.#claim(profile.code, numbered)) return numbered;
    }
    throw new Error(`no unique name left for ${crowded.name}`);
  }

  /** Whether the name was still free in `country` (it is taken now). */
  #claim(country: CountryCode, name: GeneratedName): boolean {
    const key = `${country}:${sortedTokens(name.normalized.tokens)}`;
    if (this.#taken.has(key)) return false;
    this.#taken.add(key);
    return true;
  }
}
