import type { MatchSubject, SubjectAddress, SubjectIdentifier } from './subject.ts';

// Input shapes of the spec's lookup operations. Every member is optional, as in the API:
// a caller may send any subset, and the HTTP layer's generated types can be passed as is.

interface ValueItem {
  readonly value?: string;
}

export interface NormalizedAddressInput {
  readonly thoroughfares?: readonly { readonly value?: string; readonly number?: string }[];
  readonly localities?: readonly ValueItem[];
  readonly administrativeAreas?: readonly ValueItem[];
  readonly postCodes?: readonly ValueItem[];
  readonly country?: { readonly shortName?: string };
}

/** The normalized (v3 style) members of BusinessPartnerParam; also the output record's shape. */
export interface NormalizedPartnerInput {
  readonly names?: readonly ValueItem[];
  readonly identifiers?: readonly {
    readonly value?: string;
    readonly type?: { readonly technicalKey?: string };
  }[];
  readonly legalForm?: ValueItem;
  readonly addresses?: readonly NormalizedAddressInput[];
}

interface CodeItem {
  readonly code?: string;
}

/** The bulk lookup task's `businessPartner.jsonRecord`. */
export interface JsonRecordInput {
  readonly addressData?: readonly {
    readonly organizationPostalAddress?: {
      readonly country?: CodeItem;
      readonly postCode?: string;
      readonly houseNumber?: string;
      readonly street?: { readonly name?: string };
      readonly primaryRegion?: CodeItem;
      readonly town?: { readonly name?: string };
    };
  }[];
  readonly businessPartnerType?: string;
  readonly identifications?: readonly {
    readonly identificationType?: CodeItem;
    readonly identificationNumber?: string;
  }[];
  readonly organization?: {
    readonly nameDetails?: { readonly formattedOrgNameLine1?: string; readonly formattedOrgName?: string };
  };
  readonly taxNumbers?: readonly { readonly taxNumberType?: CodeItem; readonly taxNumber?: string }[];
}

/** BusinessPartnerParam: normalized members, a jsonRecord, or both. */
export interface BusinessPartnerParamInput extends NormalizedPartnerInput {
  readonly jsonRecord?: JsonRecordInput;
}

const present = (value: string | undefined): value is string => value !== undefined && value.trim() !== '';

function identifier(value: string | undefined, type: string | undefined): SubjectIdentifier[] {
  if (!present(value)) return [];
  return [present(type) ? { value, type } : { value }];
}

function withoutEmpty(address: SubjectAddress): SubjectAddress | undefined {
  const entries = Object.entries(address).filter(([, value]) => present(value as string | undefined));
  return entries.length === 0 ? undefined : (Object.fromEntries(entries) as SubjectAddress);
}

/** Converts the normalized shape; only the first address is compared, as records carry one. */
export function subjectFromNormalized(input: NormalizedPartnerInput): MatchSubject {
  const address = input.addresses?.[0];
  const thoroughfare = address?.thoroughfares?.[0];
  const legalForm = input.legalForm?.value;
  return {
    names: (input.names ?? []).map((name) => name.value).filter(present),
    ...(present(legalForm) ? { legalForm } : {}),
    identifiers: (input.identifiers ?? []).flatMap((item) => identifier(item.value, item.type?.technicalKey)),
    address: withoutEmpty({
      street: thoroughfare?.value,
      houseNumber: thoroughfare?.number,
      postCode: address?.postCodes?.[0]?.value,
      town: address?.localities?.[0]?.value,
      region: address?.administrativeAreas?.[0]?.value,
      country: address?.country?.shortName,
    }),
  };
}

export function subjectFromJsonRecord(record: JsonRecordInput): MatchSubject {
  const address = record.addressData?.[0]?.organizationPostalAddress;
  const nameDetails = record.organization?.nameDetails;
  const names = [nameDetails?.formattedOrgName, nameDetails?.formattedOrgNameLine1].filter(present);
  return {
    names: [...new Set(names)],
    identifiers: [
      ...(record.identifications ?? []).flatMap((item) =>
        identifier(item.identificationNumber, item.identificationType?.code),
      ),
      ...(record.taxNumbers ?? []).flatMap((item) => identifier(item.taxNumber, item.taxNumberType?.code)),
    ],
    address: withoutEmpty({
      street: address?.street?.name,
      houseNumber: address?.houseNumber,
      postCode: address?.postCode,
      town: address?.town?.name,
      region: address?.primaryRegion?.code,
      country: address?.country?.code,
    }),
  };
}

/** Either input shape, or both combined: names and identifiers add up, the normalized address wins. */
export function subjectFromBusinessPartnerParam(param: BusinessPartnerParamInput): MatchSubject {
  const normalized = subjectFromNormalized(param);
  if (param.jsonRecord === undefined) return normalized;
  const fromRecord = subjectFromJsonRecord(param.jsonRecord);
  const address = normalized.address ?? fromRecord.address;
  return {
    names: [...new Set([...normalized.names, ...fromRecord.names])],
    ...(normalized.legalForm === undefined ? {} : { legalForm: normalized.legalForm }),
    identifiers: [...normalized.identifiers, ...fromRecord.identifiers],
    ...(address === undefined ? {} : { address }),
  };
}
