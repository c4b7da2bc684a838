import { describe, expect, it } from 'vitest';
import { legalFormCode } from '../../src/sandbox/matching/legal-forms.ts';
import { normalizeAddress, normalizeIdentifier, parseName } from '../../src/sandbox/matching/profile.ts';
import { tokenize } from '../../src/sandbox/matching/text.ts';

const legalFormOf = (name: string): string | undefined => parseName(name).legalForm;
const tokensOf = (name: string): readonly string[] => parseName(name).name.tokens;
const streetOf = (street: string): string | undefined =>
  normalizeAddress({ street, houseNumber: '1' }).street;

describe('legal forms', () => {
  it.each([
    ['Müller Logistik GmbH', 'Müller Logistik Gesellschaft mit beschränkter Haftung'],
    ['Smith Trading Ltd', 'Smith Trading Limited'],
    ['Smith Trading Ltd.', 'SMITH TRADING LIMITED'],
    ['Acme Inc.', 'Acme Incorporated'],
    ['Acme LLC', 'Acme Limited Liability Company'],
    ['Dubois Conseil SARL', 'Dubois Conseil Société à responsabilité limitée'],
    ['Bonvin SA', 'Bonvin Société anonyme'],
    ['Rossi Vini S.r.l.', 'Rossi Vini Società a responsabilità limitata'],
    ['Rossi Vini S.p.A.', 'Rossi Vini SpA'],
    ['de Vries Bouw B.V.', 'de Vries Bouw BV'],
    ['Nowak Meble Sp. z o.o.', 'Nowak Meble Spółka z ograniczoną odpowiedzialnością'],
    ['García Obras S.L.', 'García Obras Sociedad Limitada'],
    ['Weber Handel GmbH & Co. KG', 'Weber Handel GmbH & Co KG'],
  ])('"%s" and "%s" have the same legal form and the same name', (short, long) => {
    expect(legalFormOf(short)).toBeDefined();
    expect(legalFormOf(long)).toBe(legalFormOf(short));
    expect(tokensOf(long)).toEqual(tokensOf(short));
  });

  it('tells different legal forms apart', () => {
    expect(legalFormOf('Weber Handel GmbH & Co. KG')).not.toBe(legalFormOf('Weber Handel GmbH'));
    expect(legalFormOf('Acme AG')).not.toBe(legalFormOf('Acme GmbH'));
  });

  it('recognises a written-out form with one misspelt word', () => {
    expect(legalFormOf('Krause Informatik Gesellschaft mit beschränkter Haftugn')).toBe('GMBH');
    expect(legalFormOf('Schouten en Prins Beslotn Vennootschgap')).toBe('BV');
    expect(legalFormOf('Klein Stahlhandel GmHb & Co. KG')).toBe('GMBH_CO_KG');
  });

  it('does not take a name word for a misspelt legal form', () => {
    expect(tokensOf('Müller Carl')).toEqual(['muller', 'carl']);
    expect(legalFormOf('Müller Carl')).toBeUndefined();
  });

  it('keeps a name that is nothing but a legal-form word', () => {
    expect(tokensOf('AG')).toEqual(['ag']);
    expect(legalFormCode(tokenize('Aktiengesellschaft'))).toBe('AG');
  });
});

describe('names', () => {
  it('folds case, diacritics and punctuation', () => {
    expect(tokensOf('MÜLLER-LÜDENSCHEIDT Straßenbau')).toEqual(tokensOf('müller lüdenscheidt strassenbau'));
    expect(tokensOf('Łódź Meble')).toEqual(['lodz', 'meble']);
    expect(tokensOf("D'Angelo Vini")).toEqual(['dangelo', 'vini']);
  });

  it('drops conjunctions, so "&", "und" and "and" join names alike', () => {
    expect(tokensOf('Müller & Schmidt')).toEqual(tokensOf('Müller und Schmidt'));
    expect(tokensOf('Smith and Jones')).toEqual(['smith', 'jones']);
  });

  it('writes known abbreviations out', () => {
    expect(tokensOf('Acme Intl.')).toEqual(tokensOf('Acme International'));
    expect(tokensOf('Gebr. Weber')).toEqual(tokensOf('Gebrüder Weber'));
    expect(tokensOf('Gebrueder Weber')).toEqual(tokensOf('Gebrüder Weber'));
    expect(tokensOf('Smith Bros.')).toEqual(tokensOf('Smith Brothers'));
  });
});

describe('addresses', () => {
  it('reads Str., Straße and Strasse as one street type', () => {
    expect(streetOf('Hauptstr.')).toBe(streetOf('Hauptstraße'));
    expect(streetOf('Hauptstrasse')).toBe(streetOf('Hauptstraße'));
    expect(streetOf('Haupt Straße')).toBe(streetOf('Hauptstraße'));
  });

  it('reads common street abbreviations in other languages', () => {
    expect(streetOf('Main St')).toBe(streetOf('Main Street'));
    expect(streetOf('Av. Victor Hugo')).toBe(streetOf('Avenue Victor Hugo'));
    expect(streetOf('Kerkstr.')).toBe(streetOf('Kerkstraat'));
    expect(streetOf('Mickiewicza')).toBe(streetOf('ul. Mickiewicza'));
  });

  it('takes the house number out of the street line', () => {
    expect(normalizeAddress({ street: 'Hauptstraße 12a' })).toMatchObject({
      street: 'hauptstr',
      houseNumber: '12a',
    });
    expect(normalizeAddress({ street: '12 bis Rue de la Paix' })).toMatchObject({ houseNumber: '12bis' });
    expect(normalizeAddress({ street: 'Via Roma 12/A' })).toMatchObject({
      street: 'vroma',
      houseNumber: '12a',
    });
  });
});

describe('identifiers', () => {
  it('compares identifiers without separators or case', () => {
    expect(normalizeIdentifier({ value: 'de 123 456 789' })).toBe('DE123456789');
    expect(normalizeIdentifier({ value: 'HRB 12345' })).toBe('HRB12345');
  });

  it('restores the country prefix of a VAT number given without it', () => {
    expect(normalizeIdentifier({ value: '123456789', type: 'DE_VAT_ID' })).toBe('DE123456789');
    expect(normalizeIdentifier({ value: 'B12345678', type: 'ES_VAT_ID' })).toBe('ESB12345678');
  });

  it('reads a Swiss UID with its tax suffix as the UID', () => {
    expect(normalizeIdentifier({ value: 'CHE-123.456.789 MWST' })).toBe(
      normalizeIdentifier({ value: 'CHE-123.456.789' }),
    );
  });
});
