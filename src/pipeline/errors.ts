import { PartnerEnrichError, isPartnerEnrichError } from '../errors.ts';

export const PIPELINE_ERROR_CODES = [
  /** Outputs could not be written; the pipeline stops without committing, records are read again. */
  'PIPELINE_OUTPUT_FAILED',
  /** The input consumer failed for good; the pipeline stops without committing, records are read again. */
  'PIPELINE_SOURCE_FAILED',
  /** A failure without a code of its own (a socket reset, DNS): treated as a transport error, retried. */
  'TRANSPORT_ERROR',
  /** The service reported a task FAILED; retried up to the attempt budget. */
  'TASK_FAILED',
  /** The service rejected a task's input; not retried. */
  'TASK_INVALID_INPUT',
  /** A tombstone for a partner the storage does not know: nothing to delete, dead-lettered. */
  'DELETE_UNKNOWN_PARTNER',
] as const;

export type PipelineErrorCode = (typeof PIPELINE_ERROR_CODES)[number];

export class PipelineError extends PartnerEnrichError<PipelineErrorCode> {}

export function asPipelineError(error: unknown): PartnerEnrichError {
  if (isPartnerEnrichError(error)) return error;
  // Unknown failures (sockets reset, DNS) are transport errors: worth another try.
  return new PipelineError('TRANSPORT_ERROR', (error as Error)?.message ?? String(error), {
    cause: error,
    canRetry: true,
  });
}
