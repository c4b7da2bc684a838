import type { BusinessPartnerParamInput } from '../../src/sandbox/matching/query-shapes.ts';

// The two lookup input shapes of the spec, filled from the same fields: the normalized v3
// members, and the bulk task's jsonRecord (identifiers that are tax numbers go to taxNumbers).

/** A noisy query's fields before they are put into one of the two input shapes. */
export interface QueryFields {
  name: string;
  legalForm?: string;
  street?: string;
  houseNumber?: string;
  postCode?: string;
  town?: string;
  region?: string;
  country?: string;
  identifier?: { type: string; value: string };
}

export function normalizedParam(fields: QueryFields): BusinessPartnerParamInput {
  const value = (text: string | undefined) => (text === undefined ? [] : [{ value: text }]);
  return {
    names: [{ value: fields.name }],
    identifiers:
      fields.identifier === undefined
        ? []
        : [{ value: fields.identifier.value, type: { technicalKey: fields.identifier.type } }],
    addresses: [
      {
        thoroughfares:
          fields.street === undefined ? [] : [{ value: fields.street, number: fields.houseNumber }],
        localities: value(fields.town),
        administrativeAreas: value(fields.region),
        postCodes: value(fields.postCode),
        country: { shortName: fields.country },
      },
    ],
  };
}

export function jsonRecordParam(fields: QueryFields): BusinessPartnerParamInput {
  const identifier = fields.identifier;
  const isTax = identifier !== undefined && /VAT|NIP|STEUER/.test(identifier.type);
  return {
    jsonRecord: {
      businessPartnerType: 'ORGANIZATION',
      organization: { nameDetails: { formattedOrgName: fields.name } },
      addressData: [
        {
          organizationPostalAddress: {
            country: { code: fields.country },
            postCode: fields.postCode,
            houseNumber: fields.houseNumber,
            street: { name: fields.street },
            primaryRegion: { code: fields.region },
            town: { name: fields.town },
          },
        },
      ],
      identifications:
        identifier === undefined || isTax
          ? []
          : [{ identificationType: { code: identifier.type }, identificationNumber: identifier.value }],
      taxNumbers:
        identifier !== undefined && isTax
          ? [{ taxNumberType: { code: identifier.type }, taxNumber: identifier.value }]
          : [],
    },
  };
}
