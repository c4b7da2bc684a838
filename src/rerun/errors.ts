import { PartnerEnrichError, type ErrorOptions } from '../errors.ts';

export const RERUN_ERROR_CODES = [
  /** No job with this id in the state topic. details: jobId. */
  'RERUN_NOT_FOUND',
  /** `rerun start --id` names a job that exists already: a job is never overwritten by a new one. details: jobId. */
  'RERUN_ALREADY_EXISTS',
  /**
   * pause, resume, cancel or throttle of a job that ended (FINISHED, DIED, CANCELED): nothing
   * would follow the new request. details: jobId, status.
   */
  'RERUN_ENDED',
  /**
   * `rerun start --if-idle` while a job of the same input topic has not ended: nothing was
   * written. details: inputTopic, activeJobId.
   */
  'RERUN_SCOPE_BUSY',
  /** A followed job ended otherwise than FINISHED (DIED or CANCELED). details: jobId, status. */
  'RERUN_NOT_FINISHED',
  /** A followed job had not ended after --timeout; it goes on. details: jobId, status. */
  'RERUN_WAIT_TIMEOUT',
  /** The job's input topic does not exist: nothing to rerun, or nothing to measure progress against. details: topic. */
  'RERUN_UNKNOWN_TOPIC',
  /**
   * The internal state topic does not exist (`partner-enrich topics create` creates it,
   * compacted): jobs are kept nowhere else. details: topic.
   */
  'RERUN_STATE_TOPIC_MISSING',
] as const;

export type RerunErrorCode = (typeof RERUN_ERROR_CODES)[number];

export class RerunError extends PartnerEnrichError<RerunErrorCode> {
  constructor(code: RerunErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, { ...options, canRetry: code === 'RERUN_SCOPE_BUSY' });
  }
}
