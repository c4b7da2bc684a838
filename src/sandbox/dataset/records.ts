import type { DataSource, DataSourceCategory } from './data-sources.ts';
import { FIELD } from './data-sources.ts';
import type { OrganizationFacts } from './organizations.ts';

// A source record is built on demand from the organization's facts, the source's way of
// printing them and the record's omission mask.

export interface BusinessPartnerAddress {
  readonly thoroughfares: readonly { readonly value: string; readonly number?: string }[];
  readonly localities: readonly { readonly value: string }[];
  readonly administrativeAreas: readonly { readonly value: string }[];
  readonly postCodes: readonly { readonly value: string }[];
  readonly country: { readonly shortName: string };
}

/** The output record, in the normalized v3 member shapes. */
export interface BusinessPartner {
  readonly names: readonly { readonly value: string }[];
  readonly legalForm?: { readonly value: string };
  readonly identifiers: readonly {
    readonly value: string;
    readonly type: { readonly technicalKey: string };
  }[];
  readonly addresses: readonly BusinessPartnerAddress[];
  /** NACE Rev. 2 section, e.g. NACE_H. */
  readonly categories: readonly { readonly technicalKey: string }[];
  readonly types: readonly { readonly technicalKey: string }[];
  /** The record as an ERP customer master would hold it (name lines of 35 characters). */
  readonly formattedErpRecord: Readonly<Record<string, string>>;
}

export interface SourceRecord {
  readonly svcId: string;
  readonly dataSource: {
    readonly id: string;
    readonly name: string;
    readonly category: DataSourceCategory;
    readonly prefix: string;
  };
  readonly storageId?: string;
  readonly lastUpdatedAt: string;
  readonly businessPartner: BusinessPartner;
}

/** What one source shows of one organization, flat and already in the source's spelling. */
export interface RecordContent {
  readonly name: string;
  readonly legalForm?: string;
  readonly identifiers: readonly { readonly type: string; readonly value: string }[];
  readonly street?: string;
  readonly houseNumber?: string;
  readonly postCode?: string;
  readonly town?: string;
  readonly region?: string;
  readonly country: string;
  readonly industry: string;
}

export function recordContent(org: OrganizationFacts, source: DataSource, omitted: number): RecordContent {
  const has = (bit: number): boolean => (omitted & bit) === 0;
  const style = source.presentation;
  const legalForm = style.longLegalForm ? org.legalForm.long : org.legalForm.short;
  const display = (text: string): string => (style.upperCase ? text.toUpperCase() : text);
  const name = style.withoutLegalForm ? org.name : `${org.name} ${legalForm}`;
  const kinds = has(FIELD.IDENTIFIERS) ? source.identifierKinds : [];
  const address = org.address;
  let street = has(FIELD.STREET) ? address.street : undefined;
  let houseNumber = street !== undefined && has(FIELD.HOUSE_NUMBER) ? address.houseNumber : undefined;
  if (style.streetLine && street !== undefined && houseNumber !== undefined) {
    street = org.numberBeforeStreet ? `${houseNumber} ${street}` : `${street} ${houseNumber}`;
    houseNumber = undefined;
  }
  return {
    name: display(name),
    ...(has(FIELD.LEGAL_FORM) ? { legalForm } : {}),
    identifiers: org.identifiers
      .filter((identifier) => kinds.includes(identifier.kind))
      .map(({ type, value }) => ({ type, value })),
    ...(street === undefined ? {} : { street: display(street) }),
    ...(houseNumber === undefined ? {} : { houseNumber }),
    ...(has(FIELD.POST_CODE) ? { postCode: address.postCode } : {}),
    ...(has(FIELD.TOWN) ? { town: display(address.town) } : {}),
    ...(has(FIELD.REGION) ? { region: address.region } : {}),
    country: address.country,
    industry: org.industry,
  };
}

const values = (value: string | undefined): { value: string }[] => (value === undefined ? [] : [{ value }]);

function erpRecord(content: RecordContent): Record<string, string> {
  const fields: Record<string, string | undefined> = {
    name1: content.name.slice(0, 35),
    name2: content.name.length > 35 ? content.name.slice(35, 70) : undefined,
    street: content.street,
    houseNumber: content.houseNumber,
    postalCode: content.postCode,
    city: content.town,
    region: content.region,
    country: content.country,
    vatRegistrationNumber: content.identifiers.find((identifier) => identifier.type.endsWith('_VAT_ID'))
      ?.value,
  };
  return Object.fromEntries(
    Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

export function toBusinessPartner(content: RecordContent): BusinessPartner {
  return {
    names: [{ value: content.name }],
    ...(content.legalForm === undefined ? {} : { legalForm: { value: content.legalForm } }),
    identifiers: content.identifiers.map(({ type, value }) => ({ value, type: { technicalKey: type } })),
    addresses: [
      {
        thoroughfares:
          content.street === undefined
            ? []
            : [
                {
                  value: content.street,
                  ...(content.houseNumber === undefined ? {} : { number: content.houseNumber }),
                },
              ],
        localities: values(content.town),
        administrativeAreas: values(content.region),
        postCodes: values(content.postCode),
        country: { shortName: content.country },
      },
    ],
    categories: [{ technicalKey: `NACE_${content.industry}` }],
    types: [{ technicalKey: 'ORGANIZATION' }],
    formattedErpRecord: erpRecord(content),
  };
}
