import {
  austrianVatCheck,
  britishVatCheck,
  frenchVatKey,
  iso7064Mod11x10,
  italianVatCheck,
  leiCheckDigits,
  luhnCheckDigit,
  spanishCifControl,
  weightedMod11,
} from './check-digits.ts';
import type { CountryCode, LegalFormSpec, TownSpec } from './countries/index.ts';
import type { Random } from './random.ts';

/**
 * What an identifier is, independent of its country: data sources differ in which kinds
 * they carry (a VAT register only VAT numbers, a provider its own number and more).
 */
export type IdentifierKind = 'REGISTER' | 'VAT' | 'TAX' | 'LEI' | 'EXTD' | 'EXTB';

export interface OrganizationIdentifier {
  /** Technical key of the identifier type, e.g. DE_VAT_ID. */
  readonly type: string;
  readonly value: string;
  readonly kind: IdentifierKind;
}

/**
 * Hands out identifier values no other organization holds, so that an exact identifier
 * match names exactly one organization. Values are compared without separators, as the
 * matcher compares them.
 */
export class UniqueIdentifiers {
  readonly #taken = new Set<string>();

  claim(generate: () => string): string {
    for (;;) {
      const value = generate();
      const key = value.replace(/[^0-9A-Za-z]/g, '').toUpperCase();
      if (!this.#taken.has(key)) {
        this.#taken.add(key);
        return value;
      }
    }
  }
}

export interface IdentifierContext {
  readonly random: Random;
  readonly unique: UniqueIdentifiers;
  readonly legalForm: LegalFormSpec;
  readonly town: TownSpec;
}

type NationalGenerator = (context: IdentifierContext) => OrganizationIdentifier[];

const id = (type: string, value: string, kind: IdentifierKind): OrganizationIdentifier => ({ type, value, kind });

/** Repeats `generate` until it returns a value; for check-digit schemes that exclude some payloads. */
function retry(generate: () => string | undefined): string {
  for (;;) {
    const value = generate();
    if (value !== undefined) return value;
  }
}

const nonZeroDigits = (random: Random, length: number): string => String(random.between(1, 9)) + random.digits(length - 1);

const US_EIN_PREFIXES = ['10', '12', '20', '26', '27', '30', '33', '45', '46', '51', '61', '81', '84', '94', '98'];

const NATIONAL_GENERATORS: Record<CountryCode, NationalGenerator> = {
  DE: ({ random, unique, legalForm }) => {
    const section = legalForm.registerSection ?? 'HRB';
    const out = [id('DE_HANDELSREGISTER', unique.claim(() => `${section} ${random.between(1000, 299999)}`), 'REGISTER')];
    if (random.chance(0.9)) {
      const vat = unique.claim(() => {
        const body = nonZeroDigits(random, 8);
        return `DE${body}${iso7064Mod11x10(body)}`;
      });
      out.push(id('DE_VAT_ID', vat, 'VAT'));
    }
    if (random.chance(0.4)) {
      out.push(id('DE_STEUERNUMMER', unique.claim(() => `${random.digits(3)}/${random.digits(3)}/${random.digits(5)}`), 'TAX'));
    }
    return out;
  },
  FR: ({ random, unique }) => {
    const siren = unique.claim(() => {
      const body = nonZeroDigits(random, 8);
      return body + luhnCheckDigit(body);
    });
    const out = [id('FR_SIREN', siren, 'REGISTER')];
    if (random.chance(0.7)) {
      const nic = String(random.between(1, 99)).padStart(4, '0');
      out.push(id('FR_SIRET', `${siren}${nic}${luhnCheckDigit(siren + nic)}`, 'TAX'));
    }
    if (random.chance(0.9)) out.push(id('FR_VAT_ID', `FR${frenchVatKey(siren)}${siren}`, 'VAT'));
    return out;
  },
  GB: ({ random, unique, town }) => {
    const prefix = town.region === 'GB-GLG' || town.region === 'GB-EDH' ? 'SC' : town.region === 'GB-BFS' ? 'NI' : '';
    const number = unique.claim(() => (prefix === '' ? `0${random.digits(7)}` : prefix + random.digits(6)));
    const out = [id('GB_COMPANY_NUMBER', number, 'REGISTER')];
    if (random.chance(0.8)) {
      const vat = unique.claim(() => {
        const body = nonZeroDigits(random, 7);
        return `GB${body}${britishVatCheck(body)}`;
      });
      out.push(id('GB_VAT_ID', vat, 'VAT'));
    }
    return out;
  },
  US: ({ random, unique }) => [
    id('US_EIN', unique.claim(() => `${random.pick(US_EIN_PREFIXES)}-${random.digits(7)}`), 'REGISTER'),
  ],
  NL: ({ random, unique }) => {
    const out = [id('NL_KVK', unique.claim(() => nonZeroDigits(random, 8)), 'REGISTER')];
    if (random.chance(0.85)) {
      const vat = unique.claim(() =>
        retry(() => {
          const body = nonZeroDigits(random, 8);
          const check = weightedMod11(body, [9, 8, 7, 6, 5, 4, 3, 2]);
          return check === 10 ? undefined : `NL${body}${check}B0${random.between(1, 3)}`;
        }),
      );
      out.push(id('NL_VAT_ID', vat, 'VAT'));
    }
    return out;
  },
  ES: ({ random, unique, legalForm }) => {
    const letter = legalForm.registerSection ?? 'B';
    const nif = unique.claim(() => {
      const body = String(random.between(1, 52)).padStart(2, '0') + random.digits(5);
      return `${letter}${body}${spanishCifControl(body)}`;
    });
    const out = [id('ES_NIF', nif, 'REGISTER')];
    if (random.chance(0.8)) out.push(id('ES_VAT_ID', `ES${nif}`, 'VAT'));
    return out;
  },
  IT: ({ random, unique }) => {
    const partitaIva = unique.claim(() => {
      const body = random.digits(7) + String(random.between(1, 100)).padStart(3, '0');
      return body + italianVatCheck(body);
    });
    const out = [id('IT_PARTITA_IVA', partitaIva, 'REGISTER')];
    if (random.chance(0.9)) out.push(id('IT_VAT_ID', `IT${partitaIva}`, 'VAT'));
    return out;
  },
  CH: ({ random, unique }) => {
    const uid = unique.claim(() =>
      retry(() => {
        const body = nonZeroDigits(random, 8);
        const check = (11 - weightedMod11(body, [5, 4, 3, 2, 7, 6, 5, 4])) % 11;
        if (check === 10) return undefined;
        const digits = body + check;
        return `CHE-${digits.slice(0, 3)}.${digits.slice(3, 6)}.${digits.slice(6)}`;
      }),
    );
    const out = [id('CH_UID', uid, 'REGISTER')];
    if (random.chance(0.7)) out.push(id('CH_VAT_ID', `${uid} MWST`, 'VAT'));
    return out;
  },
  AT: ({ random, unique }) => {
    const register = unique.claim(
      () => `FN ${random.between(10000, 599999)}${random.fromAlphabet('abdfghikmpstvwxyz', 1)}`,
    );
    const out = [id('AT_FIRMENBUCH', register, 'REGISTER')];
    if (random.chance(0.85)) {
      const vat = unique.claim(() => {
        const body = random.digits(7);
        return `ATU${body}${austrianVatCheck(body)}`;
      });
      out.push(id('AT_VAT_ID', vat, 'VAT'));
    }
    return out;
  },
  PL: ({ random, unique }) => {
    const out = [id('PL_KRS', unique.claim(() => `0000${nonZeroDigits(random, 6)}`), 'REGISTER')];
    const nip = unique.claim(() =>
      retry(() => {
        const body = nonZeroDigits(random, 9);
        const check = weightedMod11(body, [6, 5, 7, 2, 3, 4, 5, 6, 7]);
        return check === 10 ? undefined : body + check;
      }),
    );
    out.push(id('PL_NIP', nip, 'TAX'));
    if (random.chance(0.85)) out.push(id('PL_VAT_ID', `PL${nip}`, 'VAT'));
    if (random.chance(0.7)) {
      const regon = unique.claim(() => {
        const body = nonZeroDigits(random, 8);
        return body + (weightedMod11(body, [8, 9, 2, 3, 4, 5, 6, 7]) % 10);
      });
      out.push(id('PL_REGON', regon, 'TAX'));
    }
    return out;
  },
};

/** The identifiers a national register would hold for an organization of `country`. */
export function nationalIdentifiers(country: CountryCode, context: IdentifierContext): OrganizationIdentifier[] {
  return NATIONAL_GENERATORS[country](context);
}

// Prefixes of a few real LEI issuers (local operating units); the rest is random.
const LEI_ISSUERS = ['5299', '5493', '2138', '9695', '8156', '3912', '7245', '2594', '6354', '8945'];

export function legalEntityIdentifier(random: Random, unique: UniqueIdentifiers): OrganizationIdentifier {
  const value = unique.claim(() => {
    const payload = `${random.pick(LEI_ISSUERS)}00${random.alphanumeric(12)}`;
    return payload + leiCheckDigits(payload);
  });
  return id('LEI', value, 'LEI');
}

/** The number a commercial provider assigns: nine digits for EXTD, country plus ten digits for EXTB. */
export function providerIdentifier(
  provider: 'EXTD' | 'EXTB',
  country: CountryCode,
  random: Random,
  unique: UniqueIdentifiers,
): OrganizationIdentifier {
  const value =
    provider === 'EXTD'
      ? unique.claim(() => nonZeroDigits(random, 9))
      : unique.claim(() => country + nonZeroDigits(random, 10));
  return id(provider === 'EXTD' ? 'EXTD_NUMBER' : 'EXTB_ID', value, provider);
}
