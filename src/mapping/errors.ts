import { PartnerEnrichError, type ErrorOptions } from '../errors.ts';

export const MAPPING_ERROR_CODES = [
  /** The record has an empty partner id, so nothing downstream could be keyed. */
  'MAPPING_MISSING_PARTNER_ID',
  /** Neither a name nor an identifier or tax number: a lookup would find nothing. */
  'MAPPING_NO_NAME_OR_IDENTIFIER',
  /** A country that is not an ISO 3166-1 alpha-2 code. */
  'MAPPING_INVALID_COUNTRY',
  /** A field longer than the service accepts. */
  'MAPPING_FIELD_TOO_LONG',
  /** Too many names, addresses, identifiers or tax numbers. */
  'MAPPING_TOO_MANY_ITEMS',
  /** A mapping file that cannot be read or does not fit the mapping schema (at start). */
  'MAPPING_FILE_INVALID',
  /** A value that a mapping file's rules cannot turn into a PartnerRecord. */
  'MAPPING_RULE_FAILED',
] as const;

export type MappingErrorCode = (typeof MAPPING_ERROR_CODES)[number];

export class MappingError extends PartnerEnrichError<MappingErrorCode> {
  constructor(code: MappingErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, { ...options, canRetry: false });
  }
}
