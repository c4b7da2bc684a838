// The bulk lookup task's `businessPartner.jsonRecord` (spec: "Business partner input",
// jsonRecord shape), built from a PartnerRecord. Records that cannot give a usable
// task are rejected here with a MappingError, so they become dead letters before any
// quota is spent on them.
import { hash } from 'node:crypto';
import type { PartnerRecord } from '../serde/partner-record.ts';
import { isCountryCode } from './countries.ts';
import { MappingError } from './errors.ts';

export interface JsonRecord {
  businessPartnerType: 'ORGANIZATION';
  organization: { nameDetails: { formattedOrgNameLine1?: string; formattedOrgName?: string } };
  addressData: {
    organizationPostalAddress: {
      country?: { code: string };
      postCode?: string;
      houseNumber?: string;
      street?: { name: string };
      primaryRegion?: { code: string };
      town?: { name: string };
    };
  }[];
  identifications: {
    identificationType: { code: string };
    identificationNumber: string;
    country?: { code: string };
  }[];
  taxNumbers: { taxNumberType: { code: string }; taxNumber: string }[];
}

/** Limits of one lookup task; the spec shows none, these keep a task within what registers accept. */
export const TASK_LIMITS = { maxFieldLength: 256, maxItems: 20 } as const;

const present = (value: string | null | undefined): value is string =>
  typeof value === 'string' && value.trim().length > 0;

function checkLength(path: string, value: string): string {
  const trimmed = value.trim();
  if (trimmed.length > TASK_LIMITS.maxFieldLength) {
    throw new MappingError(
      'MAPPING_FIELD_TOO_LONG',
      `${path} has ${trimmed.length} characters, more than ${TASK_LIMITS.maxFieldLength}`,
      { details: { path, length: trimmed.length, limit: TASK_LIMITS.maxFieldLength } },
    );
  }
  return trimmed;
}

function checkCountry(path: string, value: string): string {
  const code = value.trim().toUpperCase();
  if (!isCountryCode(code)) {
    throw new MappingError(
      'MAPPING_INVALID_COUNTRY',
      `${path} "${value.slice(0, 20)}" is not an ISO 3166-1 alpha-2 code`,
      {
        details: { path },
      },
    );
  }
  return code;
}

function checkCount(path: string, items: readonly unknown[]): void {
  if (items.length > TASK_LIMITS.maxItems) {
    throw new MappingError(
      'MAPPING_TOO_MANY_ITEMS',
      `${path} has ${items.length} items, more than ${TASK_LIMITS.maxItems}`,
      {
        details: { path, count: items.length, limit: TASK_LIMITS.maxItems },
      },
    );
  }
}

/** The legal name with its legal form, unless the name already ends with it. */
function formattedName(name: string, legalForm: string | null): string {
  if (!present(legalForm)) return name;
  const form = legalForm.trim();
  return name.toLowerCase().endsWith(form.toLowerCase()) ? name : `${name} ${form}`;
}

export function toJsonRecord(record: PartnerRecord): JsonRecord {
  if (!present(record.partnerId)) {
    throw new MappingError('MAPPING_MISSING_PARTNER_ID', 'partnerId is empty');
  }
  checkLength('partnerId', record.partnerId);
  for (const [path, items] of [
    ['names', record.names],
    ['addresses', record.addresses],
    ['identifiers', record.identifiers],
    ['taxNumbers', record.taxNumbers],
  ] as const) {
    checkCount(path, items);
  }
  const names = record.names.filter(present).map((name, i) => checkLength(`names[${i}]`, name));
  const identifications = record.identifiers
    .filter((id) => present(id.value))
    .map((id, i) => ({
      identificationType: { code: checkLength(`identifiers[${i}].type`, id.type) },
      identificationNumber: checkLength(`identifiers[${i}].value`, id.value),
      ...(present(id.country)
        ? { country: { code: checkCountry(`identifiers[${i}].country`, id.country) } }
        : {}),
    }));
  const taxNumbers = record.taxNumbers
    .filter((tax) => present(tax.value))
    .map((tax, i) => ({
      taxNumberType: { code: checkLength(`taxNumbers[${i}].type`, tax.type) },
      taxNumber: checkLength(`taxNumbers[${i}].value`, tax.value),
    }));
  if (names.length === 0 && identifications.length === 0 && taxNumbers.length === 0) {
    throw new MappingError('MAPPING_NO_NAME_OR_IDENTIFIER', 'no name, identifier or tax number to look up');
  }
  const addressData = record.addresses.map((address, i) => {
    const at = (field: string) => `addresses[${i}].${field}`;
    const postal: JsonRecord['addressData'][number]['organizationPostalAddress'] = {};
    if (present(address.country)) postal.country = { code: checkCountry(at('country'), address.country) };
    if (present(address.postCode)) postal.postCode = checkLength(at('postCode'), address.postCode);
    if (present(address.houseNumber))
      postal.houseNumber = checkLength(at('houseNumber'), address.houseNumber);
    if (present(address.street)) postal.street = { name: checkLength(at('street'), address.street) };
    if (present(address.region)) postal.primaryRegion = { code: checkLength(at('region'), address.region) };
    if (present(address.town)) postal.town = { name: checkLength(at('town'), address.town) };
    return { organizationPostalAddress: postal };
  });
  const legalName = names[0];
  const legalForm = present(record.legalForm) ? checkLength('legalForm', record.legalForm) : null;
  return {
    businessPartnerType: 'ORGANIZATION',
    organization: {
      nameDetails:
        legalName === undefined
          ? {}
          : { formattedOrgNameLine1: legalName, formattedOrgName: formattedName(legalName, legalForm) },
    },
    addressData,
    identifications,
    taxNumbers,
  };
}

/**
 * Hash of what a lookup would be asked, not of the input bytes: a re-send with a new
 * changedAt or source system but the same content costs no quota when skip-unchanged is on.
 */
export function contentHash(jsonRecord: JsonRecord): string {
  return hash('sha256', JSON.stringify(jsonRecord), 'base64url').slice(0, 32);
}
