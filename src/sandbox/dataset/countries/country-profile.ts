import type { Random, Weighted } from '../random.ts';

export const COUNTRY_CODES = ['DE', 'FR', 'GB', 'US', 'NL', 'ES', 'IT', 'CH', 'AT', 'PL'] as const;
export type CountryCode = (typeof COUNTRY_CODES)[number];

export interface LegalFormSpec extends Weighted {
  /** As registers print it after the name, e.g. "GmbH". */
  readonly short: string;
  /** Written out, e.g. "Gesellschaft mit beschränkter Haftung"; some sources print this. */
  readonly long: string;
  /** Register section or CIF letter the form implies (DE HRA/HRB, ES A/B), when it matters. */
  readonly registerSection?: string;
}

export interface TownSpec {
  readonly name: string;
  /** Leading part of the town's post codes; the country's `postCode` completes it. */
  readonly postCodePrefix: string;
  /** ISO 3166-2 subdivision code. */
  readonly region: string;
}

export interface IndustrySpec {
  readonly word: string;
  /** NACE Rev. 2 section letter, used as the record's category. */
  readonly nace: string;
}

export interface StreetTemplate extends Weighted {
  /** `{root}` is replaced by one of the country's street roots. */
  readonly template: string;
}

/** Everything the generator needs to produce plausible organizations of one country. */
export interface CountryProfile extends Weighted {
  readonly code: CountryCode;
  readonly legalForms: readonly LegalFormSpec[];
  readonly surnames: readonly string[];
  readonly industries: readonly IndustrySpec[];
  readonly brandPrefixes: readonly string[];
  readonly brandSuffixes: readonly string[];
  /** Joins two surnames, e.g. "und", "&". */
  readonly conjunctions: readonly string[];
  /** Family-business name, e.g. "Gebrüder {surname}". */
  readonly familyTemplate: string;
  readonly towns: readonly TownSpec[];
  readonly streetRoots: readonly string[];
  readonly streetTemplates: readonly StreetTemplate[];
  /** Whether addresses print the house number before the street (FR, GB, US...). */
  readonly numberBeforeStreet: boolean;
  postCode(random: Random, town: TownSpec): string;
  houseNumber(random: Random): string;
}

/** House numbers as most European countries write them: 1..199, sometimes with a letter. */
export function europeanHouseNumber(random: Random, letters = 'abc'): string {
  const number = String(random.between(1, random.chance(0.8) ? 60 : 199));
  return random.chance(0.1) ? number + random.fromAlphabet(letters, 1) : number;
}
