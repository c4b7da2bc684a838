import { compactCode } from '../matching/text.ts';
import { leiCheckDigits } from './check-digits.ts';
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
      const key = compactCode(value);
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

export const identifier = (type: string, value: string, kind: IdentifierKind): OrganizationIdentifier => ({
  type,
  value,
  kind,
});

/** Repeats `generate` until it returns a value; for check-digit schemes that exclude some payloads. */
export function retry(generate: () => string | undefined): string {
  for (;;) {
    const value = generate();
    if (value !== undefined) return value;
  }
}

export const nonZeroDigits = (random: Random, length: number): string =>
  String(random.between(1, 9)) + random.digits(length - 1);

// Prefixes of a few real LEI issuers (local operating units); the rest is random.
const LEI_ISSUERS = ['5299', '5493', '2138', '9695', '8156', '3912', '7245', '2594', '6354', '8945'];

export function legalEntityIdentifier(random: Random, unique: UniqueIdentifiers): OrganizationIdentifier {
  const value = unique.claim(() => {
    const payload = `${random.pick(LEI_ISSUERS)}00${random.alphanumeric(12)}`;
    return payload + leiCheckDigits(payload);
  });
  return identifier('LEI', value, 'LEI');
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
  return identifier(provider === 'EXTD' ? 'EXTD_NUMBER' : 'EXTB_ID', value, provider);
}
