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
    identificationType?: { code: string };
    identificationNumber: string;
    country?: { code: string };
  }[];
  taxNumbers: { taxNumberType?: { code: string }; taxNumber: string }[];
}

/** Limits of one lookup task; the spec shows none, these keep a task within what registers accept. */
export const TASK_LIMITS = { maxFieldLength: 256, maxItems: 20 } as const;

// C0 and C1 control characters other than the whitespace ones (tab, line breaks), which
// trimming already handles at the ends.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000E-\u001F\u007F-\u009F]/g;

/**
 * A value as the task carries it: control characters as spaces, NFC (canonically equal
 * spellings give one task, one content hash and one length), trimmed.
 */
const clean = (value: string): string => value.replace(CONTROL, ' ').normalize('NFC').trim();

// Whether clean() leaves anything, told without building the cleaned text: it is built once,
// by the length check (JavaScript's \s is what trim() removes).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const VISIBLE = /[^\s\u0000-\u0008\u000E-\u001F\u007F-\u009F]/;

const present = (value: string | null | undefined): value is string =>
  typeof value === 'string' && VISIBLE.test(value);

/** An identifier or tax number needs a letter or digit: "-" or "./." is a placeholder, not a number. */
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const presentNumber = (value: string | null | undefined): value is string =>
  typeof value === 'string' && LETTER_OR_DIGIT.test(value);

/**
 * Where a value is in the PartnerRecord (`names[1]`, `addresses[0].town`): spelled out only
 * for an error, not for every field of every record.
 */
const pathOf = (list: string, index?: number, member?: string): string =>
  `${list}${index === undefined ? '' : `[${index}]`}${member === undefined ? '' : `.${member}`}`;

function tooLong(path: string, length: number, what = path): MappingError {
  return new MappingError(
    'MAPPING_FIELD_TOO_LONG',
    `${what} has ${length} characters, more than ${TASK_LIMITS.maxFieldLength}`,
    { details: { path, length, limit: TASK_LIMITS.maxFieldLength } },
  );
}

/** The cleaned value; its length is counted in UTF-16 code units, after NFC. */
function checkLength(value: string, list: string, index?: number, member?: string): string {
  const cleaned = clean(value);
  if (cleaned.length > TASK_LIMITS.maxFieldLength) throw tooLong(pathOf(list, index, member), cleaned.length);
  return cleaned;
}

function checkCountry(value: string, list: string, index: number, member: string): string {
  const code = clean(value).toUpperCase();
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

/**
 * The legal name with its legal form, unless the name already ends with it as a word of its
 * own ("Muster GmbH" + GmbH; but "Nordic Lab" + AB is "Nordic Lab AB").
 */
function formattedName(name: string, legalForm: string | null): string {
  if (legalForm === null) return name;
  const lowerName = name.toLowerCase();
  const lowerForm = legalForm.toLowerCase();
  const before = lowerName.length - lowerForm.length - 1;
  const endsWithForm =
    lowerName.endsWith(lowerForm) && (before < 0 || !LETTER_OR_DIGIT.test(lowerName.charAt(before)));
  return endsWithForm ? name : `${name} ${legalForm}`;
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

/**
 * The jsonRecord of a PartnerRecord, its identifications and tax numbers in canonical order
 * (see inCanonicalOrder); an error's path indexes the record's own lists, blank items counted.
 */
export function toJsonRecord(record: PartnerRecord): JsonRecord {
  return inCanonicalOrder(mapped(record));
}

/** The jsonRecord with the lists in the record's own order: what earlier versions sent and hashed. */
function mapped(record: PartnerRecord): JsonRecord {
  if (!present(record.partnerId)) {
    throw new MappingError('MAPPING_MISSING_PARTNER_ID', 'partnerId is empty');
  }
  checkLength(record.partnerId, 'partnerId');
  // Lists are counted as sent: blank and placeholder items are left out, and of the names only
  // the first goes; 21 names, or 21 addresses mostly blank, dead-lettered a record fit to look up.
  // The task carries the first name only: the others (trade names, former names) are not
  // held to its limits, or a long trade name dead-lettered a record fit to look up.
  const legalNameIndex = record.names.findIndex(present);
  const legalName =
    legalNameIndex < 0
      ? undefined
      : checkLength(record.names[legalNameIndex] as string, 'names', legalNameIndex);
  const identifications: JsonRecord['identifications'] = [];
  for (let i = 0; i < record.identifiers.length; i += 1) {
    const id = record.identifiers[i] as PartnerRecord['identifiers'][number];
    if (!present(id.value) || !presentNumber(id.value)) continue;
    // Members in this order: the content hash of a record stays what earlier versions stored.
    const identification = {} as JsonRecord['identifications'][number];
    if (present(id.type))
      identification.identificationType = { code: checkLength(id.type, 'identifiers', i, 'type') };
    identification.identificationNumber = checkLength(id.value, 'identifiers', i, 'value');
    if (present(id.country))
      identification.country = { code: checkCountry(id.country, 'identifiers', i, 'country') };
    identifications.push(identification);
  }
  const taxNumbers: JsonRecord['taxNumbers'] = [];
  for (let i = 0; i < record.taxNumbers.length; i += 1) {
    const tax = record.taxNumbers[i] as PartnerRecord['taxNumbers'][number];
    if (!present(tax.value) || !presentNumber(tax.value)) continue;
    const taxNumber = {} as JsonRecord['taxNumbers'][number];
    if (present(tax.type)) taxNumber.taxNumberType = { code: checkLength(tax.type, 'taxNumbers', i, 'type') };
    taxNumber.taxNumber = checkLength(tax.value, 'taxNumbers', i, 'value');
    taxNumbers.push(taxNumber);
  }
  checkCount('identifiers', identifications);
  checkCount('taxNumbers', taxNumbers);
  if (legalName === undefined && identifications.length === 0 && taxNumbers.length === 0) {
    throw new MappingError('MAPPING_NO_NAME_OR_IDENTIFIER', 'no name, identifier or tax number to look up');
  }
  // A blank address is left out: the first address sent is the one the service compares.
  const addressData: JsonRecord['addressData'] = [];
  for (let i = 0; i < record.addresses.length; i += 1) {
    const postal = postalAddress(record.addresses[i] as PartnerRecord['addresses'][number], i);
    if (Object.keys(postal).length > 0) addressData.push({ organizationPostalAddress: postal });
  }
  checkCount('addresses', addressData);
  // Sent only appended to a name: without one, however long, it is no reason to refuse the record.
  const legalForm =
    present(record.legalForm) && legalName !== undefined ? checkLength(record.legalForm, 'legalForm') : null;
  const formattedOrgName = legalName === undefined ? undefined : formattedName(legalName, legalForm);
  if (formattedOrgName !== undefined && formattedOrgName.length > TASK_LIMITS.maxFieldLength) {
    const path = pathOf('names', legalNameIndex);
    throw tooLong(path, formattedOrgName.length, `${path} with legalForm`);
  }
  return {
    businessPartnerType: 'ORGANIZATION',
    organization: {
      nameDetails:
        legalName === undefined || formattedOrgName === undefined
          ? {}
          : { formattedOrgNameLine1: legalName, formattedOrgName },
    },
    addressData,
    identifications,
    taxNumbers,
  };
}

type Identification = JsonRecord['identifications'][number];
type TaxNumber = JsonRecord['taxNumbers'][number];

// Code unit order, not localeCompare: the order is part of stored hashes, so it must not
// depend on the ICU data or locale of the process.
const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const compareIdentifications = (a: Identification, b: Identification): number =>
  compareText(a.identificationType?.code ?? '', b.identificationType?.code ?? '') ||
  compareText(a.identificationNumber, b.identificationNumber) ||
  compareText(a.country?.code ?? '', b.country?.code ?? '');

const compareTaxNumbers = (a: TaxNumber, b: TaxNumber): number =>
  compareText(a.taxNumberType?.code ?? '', b.taxNumberType?.code ?? '') ||
  compareText(a.taxNumber, b.taxNumber);

const inOrder = <T>(items: readonly T[], compare: (a: T, b: T) => number): boolean =>
  items.every((item, i) => i === 0 || compare(items[i - 1] as T, item) <= 0);

/**
 * The record with its identifications and tax numbers sorted by type, number (and country):
 * the service matches on any of them, so their order is no content, and an upstream that
 * exports them in no fixed order (a set, a query without ORDER BY) re-sends the same task.
 * Addresses keep their order (the first is the one compared) and only the first name is sent.
 * A record whose lists are in that order already is returned as it is, so its task and hash
 * are what earlier versions sent and stored.
 */
function inCanonicalOrder(jsonRecord: JsonRecord): JsonRecord {
  const { identifications, taxNumbers } = jsonRecord;
  if (inOrder(identifications, compareIdentifications) && inOrder(taxNumbers, compareTaxNumbers))
    return jsonRecord;
  return {
    ...jsonRecord,
    identifications: identifications.toSorted(compareIdentifications),
    taxNumbers: taxNumbers.toSorted(compareTaxNumbers),
  };
}

/**
 * Hash of what a lookup would be asked, not of the input bytes: a re-send with a new
 * changedAt or source system, or its identifiers in another order, but the same content
 * costs no quota when skip-unchanged is on.
 */
export function contentHash(jsonRecord: JsonRecord): string {
  return hash('sha256', JSON.stringify(jsonRecord), 'base64url').slice(0, 32);
}

/** A record's lookup task and the hashes its content is known by. */
export interface LookupTask {
  jsonRecord: JsonRecord;
  /** contentHash of the task (identifiers in canonical order). */
  hash: string;
  /**
   * The hash earlier versions computed for the same content, with the identifiers and tax
   * numbers in the record's own order; set only when that order is not the canonical one (the
   * two hashes differ). A partner stored, or a submission recorded, under it is this content.
   */
  earlierHash?: string;
}

/** The task of a record with its hashes: one SHA-256 when the record's lists are in canonical order. */
export function toLookupTask(record: PartnerRecord): LookupTask {
  const asSent = mapped(record);
  const jsonRecord = inCanonicalOrder(asSent);
  const task: LookupTask = { jsonRecord, hash: contentHash(jsonRecord) };
  if (jsonRecord !== asSent) task.earlierHash = contentHash(asSent);
  return task;
}
