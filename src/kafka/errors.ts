import { PartnerEnrichError, type ErrorOptions } from '../errors.ts';

export const SINK_ERROR_CODES = [
  /**
   * An output message larger than its topic accepts (max.message.bytes); it was not sent.
   * details: output, bytes, limit. Not retried: the same record gives the same message.
   */
  'OUTPUT_TOO_LARGE',
] as const;

export type SinkErrorCode = (typeof SINK_ERROR_CODES)[number];

export class SinkError extends PartnerEnrichError<SinkErrorCode> {
  constructor(code: SinkErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, { ...options, canRetry: false });
  }
}

export const KAFKA_ERROR_CODES = [
  /** At start: no broker of `kafka.brokers` answered; `run` exits non-zero for its supervisor to retry. */
  'KAFKA_UNAVAILABLE',
  /**
   * The internal state topic (bulk ledger) could not be written within the client's retries:
   * the pipeline stops without committing, records are read again after a restart.
   */
  'STATE_WRITE_FAILED',
  /**
   * Exactly-once: the input partition's transactional producer was fenced (its partition's next
   * owner, or this member after a restart, started a producer with the same transactional id)
   * or its transaction was aborted by the broker. Nothing of the transaction is visible; the
   * member takes the partition for revoked and its records are processed again by its owner.
   */
  'TRANSACTION_FENCED',
  /**
   * Exactly-once: a transaction failed otherwise (broker away past the client's retries). The
   * pipeline stops without committing, `run` exits 1; what was not committed is processed again.
   */
  'TRANSACTION_FAILED',
] as const;

export type KafkaErrorCode = (typeof KAFKA_ERROR_CODES)[number];

export class KafkaError extends PartnerEnrichError<KafkaErrorCode> {
  constructor(code: KafkaErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, { ...options, canRetry: code === 'KAFKA_UNAVAILABLE' });
  }
}
