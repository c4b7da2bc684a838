// What an operator wants in the log: state changes (pauses, resumes, retries, dead
// letters), not one line per record; counts per record go to metrics.
import type { Logger } from '../observability/index.ts';
import type { PipelineObserver } from '../pipeline/ports.ts';

export function logObserver(logger: Logger): PipelineObserver {
  return {
    intakePaused: (reason) =>
      logger.warn(
        { reason },
        reason === 'quota' ? 'quota over limit: intake paused until it resets' : 'intake paused',
      ),
    intakeResumed: (reason) => logger.info({ reason }, 'intake resumed'),
    deadLetter: (stage, code) => logger.warn({ stage, code }, 'record dead-lettered'),
    retry: (code, attempt) => logger.info({ code, attempt }, 'lookup retried'),
    bulkFinished: (bulkId, tasks, ms) => logger.debug({ bulkId, tasks, ms }, 'bulk finished'),
    bulkFailed: (tasks, code, ms) => logger.warn({ tasks, code, ms }, 'bulk failed'),
    committed: (positions) => logger.debug({ positions }, 'committed'),
    commitFailed: (reason) => logger.warn({ reason }, 'commit failed; tried again at the next interval'),
    intentAdopted: (records) =>
      logger.warn({ records }, 'a submission intent outlived its lease: looked up under the quota it spent'),
    resumedBulkGone: (records) =>
      logger.warn({ records }, 'the service no longer knows an earlier bulk: its records are looked up anew'),
    partitionsAssigned: (partitions) => logger.info({ partitions }, 'partitions assigned'),
    partitionsRevoked: (partitions) =>
      logger.info({ partitions }, 'partitions revoked: their work is dropped'),
  };
}
