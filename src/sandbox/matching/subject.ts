// The one internal shape of "a business partner to compare": every query input (v3
// BusinessPartnerParam, bulk jsonRecord, a stored record) is converted to it first, so the
// normaliser and the scorer deal with a single shape.

export interface SubjectIdentifier {
  readonly value: string;
  /** Technical key of the identifier type (e.g. DE_VAT_ID), when the input names one. */
  readonly type?: string;
}

export interface SubjectAddress {
  readonly street?: string;
  readonly houseNumber?: string;
  readonly postCode?: string;
  readonly town?: string;
  /** Region or state code, e.g. DE-BY. */
  readonly region?: string;
  /** ISO 3166-1 alpha-2. */
  readonly country?: string;
}

export interface MatchSubject {
  readonly names: readonly string[];
  readonly legalForm?: string;
  readonly identifiers: readonly SubjectIdentifier[];
  readonly address?: SubjectAddress;
}
