// TypeScript view of schemas/PartnerRecord.avsc (the Avro schema is the source of
// truth; test/serde checks that the two agree).

export interface PartnerAddress {
  street: string | null;
  houseNumber: string | null;
  postCode: string | null;
  town: string | null;
  region: string | null;
  country: string | null;
}

export interface PartnerIdentifier {
  type: string;
  value: string;
  country: string | null;
}

export interface PartnerTaxNumber {
  type: string;
  value: string;
}

export interface PartnerRecord {
  partnerId: string;
  sourceSystem: string;
  names: string[];
  legalForm: string | null;
  addresses: PartnerAddress[];
  identifiers: PartnerIdentifier[];
  taxNumbers: PartnerTaxNumber[];
  /** Epoch milliseconds. */
  changedAt: number;
}
