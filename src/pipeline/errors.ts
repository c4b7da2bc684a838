import { PartnerEnrichError } from '../errors.ts';

export const PIPELINE_ERROR_CODES = [
  /** Outputs could not be written; the pipeline stops without committing, records are read again. */
  'PIPELINE_OUTPUT_FAILED',
  /** The input consumer failed for good; the pipeline stops without committing, records are read again. */
  'PIPELINE_SOURCE_FAILED',
  /**
   * Exactly-once: an input partition's producer was fenced (TRANSACTION_FENCED, the cause) and
   * no rebalance began within the consumer's session timeout: something other than a newer
   * owner holds its transactional id. The pipeline stops, `run` exits 1; the restart fences it.
   */
  'PARTITION_FENCED',
  /** An error without a code of the product's: a bug; the pipeline stops, records are read again after a restart. */
  'PIPELINE_UNEXPECTED_ERROR',
  /** The service reported a task FAILED; retried up to the attempt budget. */
  'TASK_FAILED',
  /** The service rejected a task's input; not retried. */
  'TASK_INVALID_INPUT',
  /**
   * A task's result in a finished bulk has no status: whether it was looked up is not known
   * (no candidates is not NO_MATCH). Dead-lettered, not looked up again: the bulk is paid, and
   * a service that answers so would answer so again. details: bulkId, taskId.
   */
  'TASK_STATUS_MISSING',
  /** A tombstone for a partner the storage does not know: nothing to delete, dead-lettered. */
  'DELETE_UNKNOWN_PARTNER',
] as const;

export type PipelineErrorCode = (typeof PIPELINE_ERROR_CODES)[number];

export class PipelineError extends PartnerEnrichError<PipelineErrorCode> {}

/**
 * The reference data service (or the way to it) is away or overloaded: 5xx, connection
 * failures, time-outs, 429, 408, a bulk that does not finish in time. Waited out, never a
 * reason to fail a record; the client has already retried what was safe to retry.
 */
const SERVICE_FAULTS = new Set([
  'REFDATA_SERVER_ERROR',
  'REFDATA_NETWORK_ERROR',
  'REFDATA_TIMEOUT',
  'REFDATA_RATE_LIMITED',
  'REFDATA_REQUEST_TIMEOUT',
  'BULK_POLL_TIMEOUT',
]);

export const isServiceFault = (error: PartnerEnrichError): boolean => SERVICE_FAULTS.has(error.code);

/**
 * Failures no record is to blame for and that waiting does not cure: the pipeline's own state
 * cannot be written (or its topic was deleted), or the schema registry or the reference data
 * service refuses the credentials. The process stops (never a dead letter), for its supervisor
 * to restart it. A refused API key dead-lettered every record instead, each after its quota
 * unit was consumed; stopped, the records are read again after the fix, and their ledger
 * intent, marked paid, spares them a second consume.
 */
const FATAL = new Set([
  'STATE_WRITE_FAILED',
  'TOPIC_MISSING',
  'SCHEMA_REGISTRY_AUTH_FAILED',
  'REFDATA_AUTH_FAILED',
]);

export const isFatal = (error: PartnerEnrichError): boolean => FATAL.has(error.code);
