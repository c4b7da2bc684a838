import { legalFormCode, splitLegalForm } from './legal-forms.ts';
import { memoize } from './memo.ts';
import type { MatchSubject, SubjectAddress, SubjectIdentifier } from './subject.ts';
import { compactCode, foldedKey, tokenize } from './text.ts';
import { canonicalNameWord, canonicalStreetWord } from './vocabulary.ts';

/** A name reduced to what identifies the organization: canonical tokens, legal form apart. */
export interface NameProfile {
  readonly tokens: readonly string[];
  /** Tokens joined without spaces; compares "Nord Tec" with "Nordtec". */
  readonly key: string;
}

export interface AddressProfile {
  /** Canonical street tokens joined without spaces ("Hauptstr." and "Haupt Straße" -> "hauptstr"). */
  readonly street: string | undefined;
  readonly houseNumber: string | undefined;
  readonly postCode: string | undefined;
  readonly town: string | undefined;
  readonly region: string | undefined;
  readonly country: string | undefined;
}

/** A record or query after normalisation: what the index stores and the scorer compares. */
export interface MatchProfile {
  readonly names: readonly NameProfile[];
  /** Legal form code (see legal-forms.ts), from the legalForm field or the end of a name. */
  readonly legalForm: string | undefined;
  /** Compact identifier values (see normalizeIdentifier). */
  readonly identifiers: readonly string[];
  /** Type technical key of each identifier, in the same order; detects conflicting numbers. */
  readonly identifierTypes: readonly (string | undefined)[];
  readonly address: AddressProfile;
  readonly country: string | undefined;
}

export interface QueryProfile extends MatchProfile {
  /** The address read with street and town the other way round; set when both are given. */
  readonly swappedAddress: AddressProfile | undefined;
}

export interface ParsedName {
  readonly name: NameProfile;
  readonly legalForm: string | undefined;
}

/** Canonical forms of `words`, stop words left out. */
export function canonicalNameWords(words: readonly string[]): string[] {
  const tokens: string[] = [];
  for (const word of words) {
    const canonical = canonicalNameWord(word);
    if (canonical !== undefined) tokens.push(canonical);
  }
  return tokens;
}

function canonicalName(words: readonly string[]): NameProfile {
  const tokens = canonicalNameWords(words);
  // A name made only of stop words ("The Die") is still a name; keep its tokens.
  const kept = tokens.length > 0 ? tokens : [...words];
  return { tokens: kept, key: kept.join('') };
}

export function parseName(name: string): ParsedName {
  const split = splitLegalForm(tokenize(name));
  return { name: canonicalName(split.tokens), legalForm: split.legalForm };
}

export const normalizeName = (name: string): NameProfile => parseName(name).name;

export const normalizeLegalForm = memoize((legalForm: string) => legalFormCode(tokenize(legalForm)));

// Some registers append the tax to the Swiss UID ("CHE-123.456.789 MWST"); it is the same number.
const SWISS_VAT_SUFFIX = /^(CHE\d{9})(MWST|TVA|IVA)$/;
const VAT_TYPE = /^([A-Z]{2})_VAT_ID$/;

const vatCountryOf = memoize((type: string) => VAT_TYPE.exec(type)?.[1]);

/** Compact form of an identifier; a VAT number given without its country prefix gets it back. */
export function normalizeIdentifier(identifier: SubjectIdentifier): string {
  const compact = compactCode(identifier.value);
  const swiss = compact.startsWith('CHE') ? SWISS_VAT_SUFFIX.exec(compact) : null;
  if (swiss?.[1] !== undefined) return swiss[1];
  const vatCountry = identifier.type === undefined ? undefined : vatCountryOf(identifier.type);
  // Swiss VAT numbers start with CHE, not CH, and are left as written.
  if (vatCountry !== undefined && vatCountry !== 'CH' && !compact.startsWith(vatCountry))
    return vatCountry + compact;
  return compact;
}

const NUMBER_FIRST = /^(\d+(?:\s?(?:bis|ter|[a-z]))?)[\s,]+(\D.*)$/i;
const NUMBER_LAST = /^(.*\D)[\s,]+(\d+(?:\s?[a-z])?(?:\s?[/-]\s?\d*[a-z]?)?)$/i;

/** Street and house number, taking the number out of the street line when it was written there. */
function splitStreet(street: string | undefined, houseNumber: string | undefined): [string?, string?] {
  if (street === undefined || houseNumber !== undefined) return [street, houseNumber];
  const trimmed = street.trim();
  const first = NUMBER_FIRST.exec(trimmed);
  if (first !== null) return [first[2], first[1]];
  const last = NUMBER_LAST.exec(trimmed);
  if (last !== null) return [last[1], last[2]];
  return [street, undefined];
}

const streetKey = memoize((street: string): string | undefined => {
  let key = '';
  for (const token of tokenize(street)) key += canonicalStreetWord(token) ?? '';
  return key === '' ? undefined : key;
});

const townKey = memoize(foldedKey);
// House numbers and regions repeat as much as towns do.
const houseNumberKey = memoize(foldedKey);
const regionKey = memoize(compactCode);

const blankToUndefined = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === '' ? undefined : value;

export function normalizeAddress(address: SubjectAddress | undefined): AddressProfile {
  const [street, houseNumber] = splitStreet(
    blankToUndefined(address?.street),
    blankToUndefined(address?.houseNumber),
  );
  const postCode = blankToUndefined(address?.postCode);
  const town = blankToUndefined(address?.town);
  const region = blankToUndefined(address?.region);
  const country = blankToUndefined(address?.country);
  return {
    street: street === undefined ? undefined : streetKey(street),
    houseNumber: houseNumber === undefined ? undefined : houseNumberKey(houseNumber),
    postCode: postCode === undefined ? undefined : compactCode(postCode),
    town: town === undefined ? undefined : townKey(town),
    region: region === undefined ? undefined : regionKey(region),
    country: country === undefined ? undefined : country.trim().toUpperCase(),
  };
}

export function normalizeSubject(subject: MatchSubject): MatchProfile {
  const parsed = subject.names.filter((name) => name.trim() !== '').map(parseName);
  const explicitLegalForm =
    subject.legalForm === undefined ? undefined : normalizeLegalForm(subject.legalForm);
  const identifiers: string[] = [];
  const identifierTypes: (string | undefined)[] = [];
  for (const identifier of subject.identifiers) {
    const value = normalizeIdentifier(identifier);
    if (value === '') continue;
    identifiers.push(value);
    identifierTypes.push(identifier.type);
  }
  const address = normalizeAddress(subject.address);
  return {
    names: parsed.map((entry) => entry.name),
    legalForm: explicitLegalForm ?? parsed.find((entry) => entry.legalForm !== undefined)?.legalForm,
    identifiers,
    identifierTypes,
    address,
    country: address.country,
  };
}

/** A query's profile: as a record's, plus the reading of its address with street and town swapped. */
export function normalizeQuery(subject: MatchSubject): QueryProfile {
  const address = subject.address;
  const swappable = address?.street !== undefined && address.town !== undefined;
  return {
    ...normalizeSubject(subject),
    swappedAddress: swappable
      ? normalizeAddress({ ...address, street: address.town, town: address.street })
      : undefined,
  };
}

/** Fields counted by `profileCompleteness`. */
const COMPLETENESS_FIELD_COUNT = 9;

/**
 * Share of filled fields after normalisation, 0..1, over name, legal form, identifier,
 * street, house number, post code, town, region and country. A house number written inside
 * the street line counts, as does a legal form written inside the name. The golden record is
 * the most complete of the best match's records.
 */
export function profileCompleteness(profile: MatchProfile): number {
  const address = profile.address;
  let filled = 0;
  if (profile.names.length > 0) filled++;
  if (profile.legalForm !== undefined) filled++;
  if (profile.identifiers.length > 0) filled++;
  if (address.street !== undefined) filled++;
  if (address.houseNumber !== undefined) filled++;
  if (address.postCode !== undefined) filled++;
  if (address.town !== undefined) filled++;
  if (address.region !== undefined) filled++;
  if (address.country !== undefined) filled++;
  return filled / COMPLETENESS_FIELD_COUNT;
}
