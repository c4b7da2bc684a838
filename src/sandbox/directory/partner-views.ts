// The dataset's records in the API's shapes. The dataset keeps its records read-only; the API
// types are mutable, so every view copies.

import type { Schemas } from '../../refdata/index.ts';
import type { BusinessPartner as DatasetPartner, SourceRecord } from '../dataset/records.ts';

type ApiPartner = Schemas['BusinessPartner'] & { legalForm?: { value: string } };

export function apiPartner(partner: DatasetPartner): ApiPartner {
  const view: ApiPartner = {
    names: partner.names.map((name) => ({ ...name })),
    identifiers: partner.identifiers.map((identifier) => ({
      value: identifier.value,
      type: { ...identifier.type },
    })),
    categories: partner.categories.map((category) => ({ ...category })),
    addresses: partner.addresses.map((address) => ({ ...structuredClone(address) })),
    formattedErpRecord: { ...partner.formattedErpRecord },
    types: partner.types.map((type) => ({ ...type })),
  };
  if (partner.legalForm !== undefined) view.legalForm = { ...partner.legalForm };
  return view;
}

export function lookupMatch(record: SourceRecord, score: number): Schemas['BusinessPartnerLookupMatch'] {
  return {
    svcId: record.svcId,
    dataSource: { aleiPrefix: record.dataSource.prefix, name: record.dataSource.name },
    businessPartner: apiPartner(record.businessPartner),
    score,
  };
}

/** The record as the key-value list SHOW_RAW_DATA adds: every leaf under its dotted path. */
export function rawKeyValues(value: unknown, prefix = ''): Schemas['KeyValueItem'][] {
  if (value === null || typeof value !== 'object') return [{ key: prefix, value: String(value) }];
  return Object.entries(value).flatMap(([key, inner]) =>
    rawKeyValues(inner, prefix === '' ? key : `${prefix}.${key}`),
  );
}
