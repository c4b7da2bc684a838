import type { Organization } from '../../src/sandbox/dataset/organizations.ts';
import type { Random } from '../../src/sandbox/dataset/random.ts';
import type { BusinessPartnerParamInput } from '../../src/sandbox/matching/query-shapes.ts';
import type { QueryFields } from './query-params.ts';
import { jsonRecordParam, normalizedParam } from './query-params.ts';

// Noisy lookups of known organizations, the way upstream ERP and CRM data differs from the
// registers: typos, abbreviations, other spellings of the legal form, missing or swapped
// address parts, an identifier or none. The abbreviation lists here are written from real
// usage, not copied from the matcher's vocabulary, so unknown abbreviations occur too.

export const NOISE_KINDS = [
  'typo',
  'abbreviation',
  'legalForm',
  'case',
  'diacritics',
  'missingFields',
  'swappedAddress',
  'streetLine',
  'streetAbbreviation',
  'identifier',
] as const;
export type NoiseKind = (typeof NOISE_KINDS)[number];

export interface NoisyQuery {
  /** Index of the organization the query describes; undefined when it is not in the dataset. */
  readonly truth: number | undefined;
  readonly noise: readonly NoiseKind[];
  readonly shape: 'normalized' | 'jsonRecord';
  readonly param: BusinessPartnerParamInput;
}

const NAME_ABBREVIATIONS: readonly [RegExp, string][] = [
  [/\bInternational(e)?\b/i, 'Intl.'],
  [/\bServices\b/, 'Svcs.'],
  [/\bTechnologies\b/, 'Tech.'],
  [/\bManufacturing\b/, 'Mfg.'],
  [/\bBrothers\b/, 'Bros.'],
  [/\bGebrüder\b/, 'Gebr.'],
  [/\bFratelli\b/, 'F.lli'],
  [/\bHermanos\b/, 'Hnos.'],
  [/\bHoldings\b/, 'Hldgs'],
  [/\bEngineering\b/, 'Eng.'],
  [/\bConstruction\b/, 'Constr.'],
  [/\bMaschinenbau\b/, 'Masch.-Bau'],
  [/\bSystemtechnik\b/, 'Systemtech.'],
  [/\bLogistique\b/, 'Log.'],
];

const STREET_ABBREVIATIONS: readonly [RegExp, string][] = [
  [/straße$/, 'str.'],
  [/strasse$/, 'str.'],
  [/straat$/, 'str.'],
  [/ Street$/, ' St'],
  [/ Avenue$/, ' Ave'],
  [/ Road$/, ' Rd'],
  [/ Boulevard$/, ' Blvd'],
  [/ Drive$/, ' Dr.'],
  [/ Lane$/, ' Ln'],
  [/^Avenue /, 'Av. '],
  [/^Boulevard /, 'Bd '],
  [/^Avenida /, 'Avda. '],
  [/^Calle /, 'C/ '],
  [/^Piazza /, 'P.za '],
  [/^Viale /, 'V.le '],
  [/^ul\. /, ''],
  [/platz$/, 'pl.'],
];

const TRANSLITERATIONS: Readonly<Record<string, string>> = {
  ä: 'ae',
  ö: 'oe',
  ü: 'ue',
  ß: 'ss',
  Ä: 'Ae',
  Ö: 'Oe',
  Ü: 'Ue',
  é: 'e',
  è: 'e',
  ê: 'e',
  à: 'a',
  á: 'a',
  í: 'i',
  ó: 'o',
  ú: 'u',
  ñ: 'n',
  ç: 'c',
  ł: 'l',
  ś: 's',
  ż: 'z',
  ź: 'z',
  ą: 'a',
  ę: 'e',
  ń: 'n',
  ć: 'c',
};

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** One keyboard slip in a word: a letter replaced, dropped, doubled in or two letters swapped. */
export function typo(word: string, random: Random): string {
  const at = random.int(word.length - 1);
  switch (random.int(4)) {
    case 0:
      return word.slice(0, at) + random.fromAlphabet(LETTERS, 1) + word.slice(at + 1);
    case 1:
      return word.slice(0, at) + word.slice(at + 1);
    case 2:
      return word.slice(0, at) + random.fromAlphabet(LETTERS, 1) + word.slice(at);
    default:
      return word.slice(0, at) + word.charAt(at + 1) + word.charAt(at) + word.slice(at + 2);
  }
}

function typoInText(text: string, random: Random): string {
  const words = text.split(' ');
  const long = words.map((word, i) => [word, i] as const).filter(([word]) => word.length >= 4);
  if (long.length === 0) return text;
  const [word, index] = random.pick(long);
  words[index] = typo(word, random);
  return words.join(' ');
}

/** Applies the noise kinds picked at random; returns the kinds applied. */
function addNoise(org: Organization, fields: QueryFields, random: Random): NoiseKind[] {
  const applied: NoiseKind[] = [];
  const apply = (kind: NoiseKind, chance: number, change: () => boolean): void => {
    if (random.chance(chance) && change()) applied.push(kind);
  };
  apply('legalForm', 0.3, () => {
    fields.name = random.chance(0.4) ? org.name : `${org.name} ${org.legalForm.long}`;
    return true;
  });
  apply('abbreviation', 0.25, () => {
    const rule = NAME_ABBREVIATIONS.find(([pattern]) => pattern.test(fields.name));
    if (rule !== undefined) fields.name = fields.name.replace(rule[0], rule[1]);
    return rule !== undefined;
  });
  apply('typo', 0.4, () => {
    fields.name = typoInText(fields.name, random);
    if (random.chance(0.15)) fields.name = typoInText(fields.name, random);
    return true;
  });
  apply('diacritics', 0.15, () => {
    const plain = fields.name.replace(/[^ -~]/g, (char) => TRANSLITERATIONS[char] ?? char);
    const changed = plain !== fields.name;
    fields.name = plain;
    return changed;
  });
  apply('case', 0.15, () => {
    fields.name = random.chance(0.5) ? fields.name.toUpperCase() : fields.name.toLowerCase();
    return true;
  });
  apply('streetAbbreviation', 0.3, () => {
    const rule = STREET_ABBREVIATIONS.find(([pattern]) => pattern.test(fields.street ?? ''));
    if (rule !== undefined) fields.street = (fields.street ?? '').replace(rule[0], rule[1]);
    return rule !== undefined;
  });
  apply('missingFields', 0.35, () => {
    const parts = ['street', 'houseNumber', 'postCode', 'town', 'region'] as const;
    const dropped = random.chance(0.1) ? parts.length : random.between(1, 2);
    for (let i = 0; i < dropped; i++) fields[random.pick(parts)] = undefined;
    return true;
  });
  apply('streetLine', 0.15, () => {
    if (fields.street === undefined || fields.houseNumber === undefined) return false;
    fields.street = org.numberBeforeStreet
      ? `${fields.houseNumber} ${fields.street}`
      : `${fields.street} ${fields.houseNumber}`;
    delete fields.houseNumber;
    return true;
  });
  apply('swappedAddress', 0.08, () => {
    if (fields.street === undefined || fields.town === undefined) return false;
    [fields.street, fields.town] = [fields.town, fields.street];
    return true;
  });
  apply('identifier', 0.4, () => {
    const identifier = random.pick(org.identifiers);
    const value = random.chance(0.3)
      ? identifier.value
          .toLowerCase()
          .replace(/(.{3})/g, '$1 ')
          .trim()
      : identifier.value;
    fields.identifier = { type: identifier.type, value };
    return true;
  });
  return applied;
}

/** A lookup for `org` with noise; `truth` is its index, or undefined for an organization outside the dataset. */
export function noisyQuery(org: Organization, truth: number | undefined, random: Random): NoisyQuery {
  const address = org.address;
  const fields: QueryFields = {
    name: `${org.name} ${org.legalForm.short}`,
    street: address.street,
    houseNumber: address.houseNumber,
    postCode: address.postCode,
    town: address.town,
    region: address.region,
    country: address.country,
  };
  const noise = addNoise(org, fields, random);
  const shape = random.chance(0.5) ? 'normalized' : 'jsonRecord';
  return {
    truth,
    noise,
    shape,
    param: shape === 'normalized' ? normalizedParam(fields) : jsonRecordParam(fields),
  };
}
