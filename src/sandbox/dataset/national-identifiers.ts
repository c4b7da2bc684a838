import {
  austrianVatCheck,
  britishVatCheck,
  frenchVatKey,
  iso7064Mod11x10,
  italianVatCheck,
  luhnCheckDigit,
  spanishCifControl,
  weightedMod11,
} from './check-digits.ts';
import type { CountryCode } from './countries/index.ts';
import type { IdentifierContext, OrganizationIdentifier } from './identifiers.ts';
import { identifier, nonZeroDigits, retry } from './identifiers.ts';

// The numbers a national register would give an organization, per country, in their usual
// shapes and with valid check digits: DE Handelsregister and USt-IdNr., FR SIREN/SIRET,
// GB company number, US EIN, NL KvK, ES NIF, IT partita IVA, CH UID, AT Firmenbuch, PL KRS/NIP/REGON.

type NationalGenerator = (context: IdentifierContext) => OrganizationIdentifier[];

// Prefixes the IRS assigns to its campuses; a few of them.
const US_EIN_PREFIXES = '10 12 20 26 27 30 33 45 46 51 61 81 84 94 98'.split(' ');

const NATIONAL_GENERATORS: Record<CountryCode, NationalGenerator> = {
  DE: ({ random, unique, legalForm }) => {
    const section = legalForm.registerSection ?? 'HRB';
    const out = [
      identifier(
        'DE_HANDELSREGISTER',
        unique.claim(() => `${section} ${random.between(1000, 299999)}`),
        'REGISTER',
      ),
    ];
    if (random.chance(0.9)) {
      const vat = unique.claim(() => {
        const body = nonZeroDigits(random, 8);
        return `DE${body}${iso7064Mod11x10(body)}`;
      });
      out.push(identifier('DE_VAT_ID', vat, 'VAT'));
    }
    if (random.chance(0.4)) {
      out.push(
        identifier(
          'DE_STEUERNUMMER',
          unique.claim(() => `${random.digits(3)}/${random.digits(3)}/${random.digits(5)}`),
          'TAX',
        ),
      );
    }
    return out;
  },
  FR: ({ random, unique }) => {
    const siren = unique.claim(() => {
      const body = nonZeroDigits(random, 8);
      return body + luhnCheckDigit(body);
    });
    const out = [identifier('FR_SIREN', siren, 'REGISTER')];
    if (random.chance(0.7)) {
      const nic = String(random.between(1, 99)).padStart(4, '0');
      out.push(identifier('FR_SIRET', `${siren}${nic}${luhnCheckDigit(siren + nic)}`, 'TAX'));
    }
    if (random.chance(0.9)) out.push(identifier('FR_VAT_ID', `FR${frenchVatKey(siren)}${siren}`, 'VAT'));
    return out;
  },
  GB: ({ random, unique, town }) => {
    const prefix =
      town.region === 'GB-GLG' || town.region === 'GB-EDH' ? 'SC' : town.region === 'GB-BFS' ? 'NI' : '';
    const number = unique.claim(() => (prefix === '' ? `0${random.digits(7)}` : prefix + random.digits(6)));
    const out = [identifier('GB_COMPANY_NUMBER', number, 'REGISTER')];
    if (random.chance(0.8)) {
      const vat = unique.claim(() => {
        const body = nonZeroDigits(random, 7);
        return `GB${body}${britishVatCheck(body)}`;
      });
      out.push(identifier('GB_VAT_ID', vat, 'VAT'));
    }
    return out;
  },
  US: ({ random, unique }) => [
    identifier(
      'US_EIN',
      unique.claim(() => `${random.pick(US_EIN_PREFIXES)}-${random.digits(7)}`),
      'REGISTER',
    ),
  ],
  NL: ({ random, unique }) => {
    const out = [
      identifier(
        'NL_KVK',
        unique.claim(() => nonZeroDigits(random, 8)),
        'REGISTER',
      ),
    ];
    if (random.chance(0.85)) {
      const vat = unique.claim(() =>
        retry(() => {
          const body = nonZeroDigits(random, 8);
          const check = weightedMod11(body, [9, 8, 7, 6, 5, 4, 3, 2]);
          return check === 10 ? undefined : `NL${body}${check}B0${random.between(1, 3)}`;
        }),
      );
      out.push(identifier('NL_VAT_ID', vat, 'VAT'));
    }
    return out;
  },
  ES: ({ random, unique, legalForm }) => {
    const letter = legalForm.registerSection ?? 'B';
    const nif = unique.claim(() => {
      const body = String(random.between(1, 52)).padStart(2, '0') + random.digits(5);
      return `${letter}${body}${spanishCifControl(body)}`;
    });
    const out = [identifier('ES_NIF', nif, 'REGISTER')];
    if (random.chance(0.8)) out.push(identifier('ES_VAT_ID', `ES${nif}`, 'VAT'));
    return out;
  },
  IT: ({ random, unique }) => {
    const partitaIva = unique.claim(() => {
      const body = random.digits(7) + String(random.between(1, 100)).padStart(3, '0');
      return body + italianVatCheck(body);
    });
    const out = [identifier('IT_PARTITA_IVA', partitaIva, 'REGISTER')];
    if (random.chance(0.9)) out.push(identifier('IT_VAT_ID', `IT${partitaIva}`, 'VAT'));
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
    const out = [identifier('CH_UID', uid, 'REGISTER')];
    if (random.chance(0.7)) out.push(identifier('CH_VAT_ID', `${uid} MWST`, 'VAT'));
    return out;
  },
  AT: ({ random, unique }) => {
    const register = unique.claim(
      () => `FN ${random.between(10000, 599999)}${random.fromAlphabet('abdfghikmpstvwxyz', 1)}`,
    );
    const out = [identifier('AT_FIRMENBUCH', register, 'REGISTER')];
    if (random.chance(0.85)) {
      const vat = unique.claim(() => {
        const body = random.digits(7);
        return `ATU${body}${austrianVatCheck(body)}`;
      });
      out.push(identifier('AT_VAT_ID', vat, 'VAT'));
    }
    return out;
  },
  PL: ({ random, unique }) => {
    const out = [
      identifier(
        'PL_KRS',
        unique.claim(() => `0000${nonZeroDigits(random, 6)}`),
        'REGISTER',
      ),
    ];
    const nip = unique.claim(() =>
      retry(() => {
        const body = nonZeroDigits(random, 9);
        const check = weightedMod11(body, [6, 5, 7, 2, 3, 4, 5, 6, 7]);
        return check === 10 ? undefined : body + check;
      }),
    );
    out.push(identifier('PL_NIP', nip, 'TAX'));
    if (random.chance(0.85)) out.push(identifier('PL_VAT_ID', `PL${nip}`, 'VAT'));
    if (random.chance(0.7)) {
      const regon = unique.claim(() => {
        const body = nonZeroDigits(random, 8);
        return body + (weightedMod11(body, [8, 9, 2, 3, 4, 5, 6, 7]) % 10);
      });
      out.push(identifier('PL_REGON', regon, 'TAX'));
    }
    return out;
  },
};

/** The identifiers a national register would hold for an organization of `country`. */
export function nationalIdentifiers(
  country: CountryCode,
  context: IdentifierContext,
): OrganizationIdentifier[] {
  return NATIONAL_GENERATORS[country](context);
}
