import { describe, expect, it } from 'vitest';
import {
  austrianVatCheck,
  britishVatCheck,
  iso7064Mod11x10,
  isLuhnValid,
  italianVatCheck,
  mod97,
  spanishCifControl,
  weightedMod11,
} from '../../src/sandbox/dataset/check-digits.ts';
import type { CountryCode } from '../../src/sandbox/dataset/countries/index.ts';
import { COUNTRY_CODES, countryProfile } from '../../src/sandbox/dataset/countries/index.ts';
import type { OrganizationIdentifier } from '../../src/sandbox/dataset/identifiers.ts';
import {
  legalEntityIdentifier,
  providerIdentifier,
  UniqueIdentifiers,
} from '../../src/sandbox/dataset/identifiers.ts';
import { nationalIdentifiers } from '../../src/sandbox/dataset/national-identifiers.ts';
import { Random } from '../../src/sandbox/dataset/random.ts';

/** Each identifier type and the shape its values have in that country. */
const SHAPES: Record<string, RegExp> = {
  DE_HANDELSREGISTER: /^HR[AB] \d{4,6}$/,
  DE_VAT_ID: /^DE\d{9}$/,
  DE_STEUERNUMMER: /^\d{3}\/\d{3}\/\d{5}$/,
  FR_SIREN: /^\d{9}$/,
  FR_SIRET: /^\d{14}$/,
  FR_VAT_ID: /^FR\d{11}$/,
  GB_COMPANY_NUMBER: /^(\d{8}|SC\d{6}|NI\d{6})$/,
  GB_VAT_ID: /^GB\d{9}$/,
  US_EIN: /^\d{2}-\d{7}$/,
  NL_KVK: /^\d{8}$/,
  NL_VAT_ID: /^NL\d{9}B0\d$/,
  ES_NIF: /^[AB]\d{8}$/,
  ES_VAT_ID: /^ES[AB]\d{8}$/,
  IT_PARTITA_IVA: /^\d{11}$/,
  IT_VAT_ID: /^IT\d{11}$/,
  CH_UID: /^CHE-\d{3}\.\d{3}\.\d{3}$/,
  CH_VAT_ID: /^CHE-\d{3}\.\d{3}\.\d{3} MWST$/,
  AT_FIRMENBUCH: /^FN \d{5,6}[a-z]$/,
  AT_VAT_ID: /^ATU\d{8}$/,
  PL_KRS: /^\d{10}$/,
  PL_NIP: /^\d{10}$/,
  PL_VAT_ID: /^PL\d{10}$/,
  PL_REGON: /^\d{9}$/,
};

/** The check each identifier type's check digit must pass. */
const CHECKS: Record<string, (value: string) => boolean> = {
  DE_VAT_ID: (value) => iso7064Mod11x10(value.slice(2, 10)) === Number(value.slice(10)),
  FR_SIREN: isLuhnValid,
  FR_SIRET: isLuhnValid,
  GB_VAT_ID: (value) => britishVatCheck(value.slice(2, 9)) === value.slice(9),
  NL_VAT_ID: (value) =>
    weightedMod11(value.slice(2, 10), [9, 8, 7, 6, 5, 4, 3, 2]) === Number(value.charAt(10)),
  ES_NIF: (value) => spanishCifControl(value.slice(1, 8)) === Number(value.charAt(8)),
  IT_PARTITA_IVA: (value) => italianVatCheck(value.slice(0, 10)) === Number(value.charAt(10)),
  CH_UID: (value) => {
    const digits = value.replace(/\D/g, '');
    return (
      (11 - weightedMod11(digits.slice(0, 8), [5, 4, 3, 2, 7, 6, 5, 4])) % 11 === Number(digits.charAt(8))
    );
  },
  AT_VAT_ID: (value) => austrianVatCheck(value.slice(3, 10)) === Number(value.charAt(10)),
  PL_NIP: (value) =>
    weightedMod11(value.slice(0, 9), [6, 5, 7, 2, 3, 4, 5, 6, 7]) === Number(value.charAt(9)),
  PL_REGON: (value) =>
    weightedMod11(value.slice(0, 8), [8, 9, 2, 3, 4, 5, 6, 7]) % 10 === Number(value.charAt(8)),
};

function identifiersOf(
  country: CountryCode,
  count: number,
  unique = new UniqueIdentifiers(),
): OrganizationIdentifier[] {
  const random = new Random(11);
  const profile = countryProfile(country);
  return Array.from({ length: count }, () =>
    nationalIdentifiers(country, {
      random,
      unique,
      legalForm: random.weighted(profile.legalForms),
      town: random.pick(profile.towns),
    }),
  ).flat();
}

describe('national identifiers', () => {
  it.each(COUNTRY_CODES)('%s identifiers have the shape and check digits of their type', (country) => {
    const identifiers = identifiersOf(country, 300);
    const types = new Set(identifiers.map((identifier) => identifier.type));
    expect([...types].every((type) => type.startsWith(`${country}_`))).toBe(true);
    for (const identifier of identifiers) {
      expect(identifier.value).toMatch(SHAPES[identifier.type] ?? /^$/);
      expect(CHECKS[identifier.type]?.(identifier.value) ?? true).toBe(true);
    }
  });

  it('gives every organization a register number and most a VAT number, except in the US', () => {
    const german = identifiersOf('DE', 200);
    expect(german.filter((identifier) => identifier.kind === 'REGISTER')).toHaveLength(200);
    expect(german.filter((identifier) => identifier.kind === 'VAT').length).toBeGreaterThan(150);
    expect(identifiersOf('US', 50).every((identifier) => identifier.type === 'US_EIN')).toBe(true);
  });

  it('never hands out the same number twice across countries, whatever the separators', () => {
    const unique = new UniqueIdentifiers();
    const values = COUNTRY_CODES.flatMap((country) => identifiersOf(country, 300, unique)).map((identifier) =>
      identifier.value.replace(/[^0-9A-Za-z]/g, '').toUpperCase(),
    );
    expect(new Set(values).size).toBe(values.length);
  });
});

describe('LEI and provider numbers', () => {
  it('makes 20-character LEIs that pass the ISO 17442 check', () => {
    const random = new Random(3);
    const unique = new UniqueIdentifiers();
    for (let i = 0; i < 200; i++) {
      const { value } = legalEntityIdentifier(random, unique);
      expect(value).toMatch(/^[0-9A-Z]{4}00[0-9A-Z]{12}\d{2}$/);
      expect(mod97(value)).toBe(1);
    }
  });

  it('numbers EXTD with nine digits and EXTB with the country and ten digits', () => {
    const random = new Random(3);
    const unique = new UniqueIdentifiers();
    expect(providerIdentifier('EXTD', 'FR', random, unique)).toMatchObject({
      type: 'EXTD_NUMBER',
      value: expect.stringMatching(/^\d{9}$/),
    });
    expect(providerIdentifier('EXTB', 'FR', random, unique)).toMatchObject({
      type: 'EXTB_ID',
      value: expect.stringMatching(/^FR\d{10}$/),
    });
  });
});

describe('check digits', () => {
  // Published example numbers, checked by hand against each algorithm.
  it('accepts known valid numbers', () => {
    expect(isLuhnValid('732829320')).toBe(true);
    expect(isLuhnValid('732829321')).toBe(false);
    expect(iso7064Mod11x10('13669597')).toBe(6);
    expect(britishVatCheck('9807806')).toBe('84');
    expect(italianVatCheck('0764352056')).toBe(7);
    expect(spanishCifControl('5881850')).toBe(1);
    expect(austrianVatCheck('1358562')).toBe(7);
    expect(weightedMod11('123456321', [6, 5, 7, 2, 3, 4, 5, 6, 7])).toBe(8);
    expect((11 - weightedMod11('11628171', [5, 4, 3, 2, 7, 6, 5, 4])) % 11).toBe(0);
  });
});
