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

/**
 * Where a value is in the PartnerRecord (`names[1]`, `addresses[0].town`): spelled out only
 * for an error, not for every field of every record.
 */
const pathOf = (list: string, index?: number, member?: string): string =>
  `${list}${index === undefined ? '' : `[${index}]`}${member === undefined ? '' : `.${member}`}`;

function checkLength(value: string, list: string, index?: number, member?: string): string {
  const trimmed = value.trim();
  if (trimmed.length > TASK_LIMITS.maxFieldLength) {
    const path = pathOf(list, index, member);
    throw new MappingError(
      'MAPPING_FIELD_TOO_LONG',
      `${path} has ${trimmed.length} characters, more than ${TASK_LIMITS.maxFieldLength}`,
      { details: { path, length: trimmed.length, limit: TASK_LIMITS.maxFieldLength } },
    );
  }
  return trimmed;
}

function checkCountry(value: string, list: string, index: number, member: string): string {
  const code = value.trim().toUpperCase();
  if (!isCountryCode(code)) {
    const path = pathOf(list, index, member);
    throw new MappingError(
      'MAPPING_INVALID_COUNTRY',
      `${path} "${value.slice(0, 20)}" is not an ISO 3166-1 alpha-2 code`,
      { details: { path } },
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

type PostalAddress = JsonRecord['addressData'][number]['organizationPostalAddress'];

function postalAddress(address: PartnerRecord['addresses'][number], i: number): PostalAddress {
  const postal: PostalAddress = {};
  if (present(address.country))
    postal.country = { code: checkCountry(address.country, 'addresses', i, 'country') };
  if (present(address.postCode)) postal.postCode = checkLength(address.postCode, 'addresses', i, 'postCode');
  if (present(address.houseNumber))
    postal.houseNumber = checkLength(address.houseNumber, 'addresses', i, 'houseNumber');
  if (present(address.street))
    postal.street = { name: checkLength(address.street, 'addresses', i, 'street') };
  if (present(address.region))
    postal.primaryRegion = { code: checkLength(address.region, 'addresses', i, 'region') };
  if (present(address.town)) postal.town = { name: checkLength(address.town, 'addresses', i, 'town') };
  return postal;
}

/** The jsonRecord of a PartnerRecord; an error's path indexes the record's own lists, blank items counted. */
export function toJsonRecord(record: PartnerRecord): JsonRecord {
  if (!present(record.partnerId)) {
    throw new MappingError('MAPPING_MISSING_PARTNER_ID', 'partnerId is empty');
  }
  checkLength(record.partnerId, 'partnerId');
  checkCount('names', record.names);
  checkCount('addresses', record.addresses);
  checkCount('identifiers', record.identifiers);
  checkCount('taxNumbers', record.taxNumbers);
  const names: string[] = [];
  for (let i = 0; i < record.names.length; i += 1) {
    const name = record.names[i];
    if (present(name)) names.push(checkLength(name, 'names', i));
  }
  const identifications: JsonRecord['identifications'] = [];
  for (let i = 0; i < record.identifiers.length; i += 1) {
    const id = record.identifiers[i] as PartnerRecord['identifiers'][number];
    if (!present(id.value)) continue;
    const identification: JsonRecord['identifications'][number] = {
      identificationType: { code: checkLength(id.type, 'identifiers', i, 'type') },
      identificationNumber: checkLength(id.value, 'identifiers', i, 'value'),
    };
    if (present(id.country))
      identification.country = { code: checkCountry(id.country, 'identifiers', i, 'country') };
    identifications.push(identification);
  }
  const taxNumbers: JsonRecord['taxNumbers'] = [];
  for (let i = 0; i < record.taxNumbers.length; i += 1) {
    const tax = record.taxNumbers[i] as PartnerRecord['taxNumbers'][number];
    if (!present(tax.value)) continue;
    taxNumbers.push({
      taxNumberType: { code: checkLength(tax.type, 'taxNumbers', i, 'type') },
      taxNumber: checkLength(tax.value, 'taxNumbers', i, 'value'),
    });
  }
  if (names.length === 0 && identifications.length === 0 && taxNumbers.length === 0) {
    throw new MappingError('MAPPING_NO_NAME_OR_IDENTIFIER', 'no name, identifier or tax number to look up');
  }
  const addressData: JsonRecord['addressData'] = [];
  for (let i = 0; i < record.addresses.length; i += 1)
    addressData.push({
      organizationPostalAddress: postalAddress(record.addresses[i] as PartnerRecord['addresses'][number], i),
    });
  const legalName = names[0];
  const legalForm = present(record.legalForm) ? checkLength(record.legalForm, 'legalForm') : null;
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
