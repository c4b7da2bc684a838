import type { DataSource } from './data-sources.ts';
import type { OrganizationFacts } from './organizations.ts';

// The value part of `<PREFIX>:<value>`: the source's own key for the organization where it
// has one (register number, VAT number, LEI, provider number), otherwise a number the
// source would assign.

const compact = (value: string): string => value.replace(/[^0-9A-Za-z]/g, '').toUpperCase();

/** A bijection on 32-bit integers, so that distinct organizations get distinct, unordered ids. */
const scramble = (index: number, multiplier: number): number => Math.imul(index + 1, multiplier) >>> 0;

function identifierOf(org: OrganizationFacts, type: (type: string) => boolean): string | undefined {
  return org.identifiers.find((identifier) => type(identifier.type))?.value;
}

export function svcIdValue(
  source: DataSource,
  org: OrganizationFacts,
  index: number,
  counter: number,
): string {
  const register = (): string => {
    const value =
      org.identifiers.find((identifier) => identifier.kind === 'REGISTER')?.value ?? String(index);
    return `${org.country}-${compact(value)}`;
  };
  const vat = (): string => compact(identifierOf(org, (type) => type.endsWith('_VAT_ID')) ?? register());
  switch (source.id) {
    case 'OPENREG':
      return register();
    case 'LEIREG':
      return identifierOf(org, (type) => type === 'LEI') ?? register();
    case 'VATREG':
    case 'BZST':
      return vat();
    case 'EXTD':
      return identifierOf(org, (type) => type === 'EXTD_NUMBER') ?? register();
    case 'EXTB':
      return identifierOf(org, (type) => type === 'EXTB_ID') ?? register();
    case 'NLBR':
      return identifierOf(org, (type) => type === 'NL_KVK') ?? register();
    case 'SVCPOOL':
      return scramble(index, 0x9e3779b1).toString(16).padStart(8, '0');
    case 'GEOPLACES':
      return `gp${scramble(index, 0x85ebca6b).toString(36)}`;
    default:
      // Data mirrors number their records in order of creation.
      return `${source.prefix.charAt(0)}${String(counter).padStart(7, '0')}`;
  }
}
