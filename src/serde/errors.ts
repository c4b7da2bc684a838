import { PartnerEnrichError, type ErrorOptions } from '../errors.ts';

export const SERDE_ERROR_CODES = [
  /** JSON input that is not a JSON object. */
  'DECODE_NOT_JSON',
  /** A value (JSON or Avro) whose fields do not fit the PartnerRecord schema; details.paths lists them. */
  'DECODE_INVALID_FIELDS',
  /** Bytes that do not start with the Confluent wire format's magic byte and schema id. */
  'DECODE_NOT_AVRO',
  /** The schema id in the message is not known to the schema registry. */
  'DECODE_UNKNOWN_SCHEMA_ID',
  /**
   * The writer schema the registry serves cannot be built (not Avro, a default avsc refuses) or
   * read with the pipeline's reader schema (its records matched by name without namespace, its
   * required fields taken as nullable); found once per schema id.
   */
  'DECODE_INCOMPATIBLE_SCHEMA',
  /** Avro bytes that end early, carry trailing garbage, count more array or map items than the bytes left can hold, or more than 10,000 array items that take no bytes (nulls, empty records) in all. */
  'DECODE_CORRUPT_AVRO',
  /** A string (JSON input as a whole, or an Avro string field; details.path names it, a map key as <map>.entries.<n>.key) that is not valid UTF-8. */
  'DECODE_INVALID_UTF8',
  /** A tombstone's key in the Confluent wire format (a Confluent key serializer's) whose schema is not an Avro string, so it names no partner id: refused once per schema id. */
  'DECODE_KEY_NOT_PARTNER_ID',
  /** The schema registry did not answer (unreachable, no answer within 10 s, an HTTP error but 401, 403 and 404): retried while decoding, never a dead letter by itself; at start, `run` exits. */
  'SCHEMA_REGISTRY_UNAVAILABLE',
  /** The schema registry refused the credentials (HTTP 401 or 403), while decoding or at start: never retried, never a dead letter; `run` exits non-zero. details.status. */
  'SCHEMA_REGISTRY_AUTH_FAILED',
  /** At start: an output schema the subject's compatibility level refuses next to its existing versions. */
  'SCHEMA_INCOMPATIBLE',
  /** At start: the registry refused an output schema for a reason other than compatibility or credentials (an invalid schema). */
  'SCHEMA_REGISTRATION_REJECTED',
] as const;

export type SerdeErrorCode = (typeof SERDE_ERROR_CODES)[number];

export class SerdeError extends PartnerEnrichError<SerdeErrorCode> {
  constructor(code: SerdeErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, { ...options, canRetry: code === 'SCHEMA_REGISTRY_UNAVAILABLE' });
  }
}
