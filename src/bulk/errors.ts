import { PartnerEnrichError, type ErrorOptions } from '../errors.ts';

export const BULK_ERROR_CODES = [
  /** The service reported the whole bulk FAILED; its tasks are retried. */
  'BULK_FAILED',
  /** The bulk did not reach a final status within the polling budget; it is polled again later. */
  'BULK_POLL_TIMEOUT',
  /** A task was not in the bulk's results. */
  'BULK_TASK_MISSING',
  /** The pipeline stopped while the bulk was polled; it stays in the ledger and is resumed on restart. */
  'BULK_ABANDONED',
  /** The service answered a bulk creation without a bulk id: nothing to poll; not retried. */
  'BULK_CREATED_WITHOUT_ID',
] as const;

export type BulkErrorCode = (typeof BULK_ERROR_CODES)[number];

export class BulkError extends PartnerEnrichError<BulkErrorCode> {
  constructor(code: BulkErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, { ...options, canRetry: code !== 'BULK_CREATED_WITHOUT_ID' });
  }
}
