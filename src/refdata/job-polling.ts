// Waiting for asynchronous work (EXTD lookup jobs, event store initializer jobs, bulk lookups):
// poll with exponential backoff and jitter until a final status, reporting each poll. The
// spec lists the statuses but not the transitions, so "final" is our reading of their names:
// FINISHED (and ARCHIVED for event store jobs) succeed; COULDNT_START, DIED, CANCELED and a
// bulk's FAILED (or CANCELED) fail; everything else, UNKNOWN included, keeps the poll going.
// A job runs on the service whether or not it is read: a read that fails for a reason that
// may pass (the client's own attempts used up on resets, time-outs, 5xx, 429) is a missed
// poll, read again under the client's retry policy, and only a run of them ends the wait.

import { setTimeout as delay } from 'node:timers/promises';
import type { RefDataClient } from './client.ts';
import {
  isRefDataError,
  RefDataHttpError,
  RefDataJobError,
  RefDataTransportError,
  type JobFailure,
} from './errors.ts';
import type { CallOptions, Schemas } from './operation-types.ts';
import { backoffDelay } from '../retry/backoff.ts';
import { nextRetryDelayMs, type RetryEnvironment } from './retry-policy.ts';

export interface JobProgress {
  jobId: string;
  status: string | undefined;
  /** Percent (0..100) for jobs; the bulk's own `progress` value for bulks. */
  progress: number | undefined;
  polls: number;
  elapsedMs: number;
}

export interface PollOptions extends Partial<RetryEnvironment> {
  /** Ceiling of the first wait; doubles per poll. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Overall budget; exceeding it fails with REFDATA_JOB_TIMEOUT (REFDATA_JOB_UNREACHABLE when the last read failed). */
  timeoutMs?: number;
  /** Missed polls in a row (reads failing with a retryable error) that end the wait with REFDATA_JOB_UNREACHABLE. */
  maxMissedPolls?: number;
  onProgress?: (progress: JobProgress) => void;
  signal?: AbortSignal;
}

// Between 8 missed polls in a row: 1, 2, 4, 8, 16, 30 and 30 s (each drawn between half and all
// of it), besides the client's own attempts at each read: an outage of one to two minutes is
// ridden out.
export const POLL_DEFAULTS = Object.freeze({
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  timeoutMs: 30 * 60_000,
  maxMissedPolls: 8,
});

interface JobKind<Job> {
  kind: JobFailure['kind'];
  readOperation: string;
  read: (call: CallOptions) => Promise<Job>;
  statusOf: (job: Job) => string | undefined;
  progressOf: (job: Job) => number | undefined;
  messageOf: (job: Job) => string | undefined;
  succeeded: readonly string[];
  failed: readonly string[];
}

async function pollUntilFinal<Job>(jobId: string, kind: JobKind<Job>, options: PollOptions): Promise<Job> {
  const { initialDelayMs, maxDelayMs, timeoutMs, maxMissedPolls } = { ...POLL_DEFAULTS, ...options };
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? ((ms: number, signal?: AbortSignal) => delay(ms, undefined, { signal }));
  const call: CallOptions = options.signal ? { signal: options.signal } : {};
  // A Retry-After is waited for however long, within the budget: the job goes on meanwhile.
  const missedPollPolicy = {
    maxAttempts: maxMissedPolls,
    baseDelayMs: initialDelayMs,
    maxDelayMs,
    maxRetryAfterMs: timeoutMs,
  };
  const startedAt = now();
  let failure: JobFailure = { kind: kind.kind, jobId, status: undefined };
  let missed = 0;
  for (let polls = 1; ;) {
    const read = await kind.read(call).then(
      (job) => ({ job }),
      (error: unknown) => {
        // Only a failure that may pass is a missed poll: a 404, a refused credential or an
        // answer that cannot be read stays what it is however often the job is read.
        if (isRefDataError(error) && error.canRetry) return { error };
        throw error;
      },
    );
    let waitMs: number | undefined;
    if ('error' in read) {
      const retryAfterMs = read.error instanceof RefDataHttpError ? read.error.retryAfterMs : undefined;
      waitMs = nextRetryDelayMs({ canRetry: true, retryAfterMs }, ++missed, missedPollPolicy, random);
      if (waitMs === undefined || now() - startedAt + waitMs > timeoutMs)
        throw new RefDataJobError('REFDATA_JOB_UNREACHABLE', failure, { cause: read.error });
    } else {
      missed = 0;
      const status = kind.statusOf(read.job);
      options.onProgress?.({
        jobId,
        status,
        progress: kind.progressOf(read.job),
        polls,
        elapsedMs: now() - startedAt,
      });
      if (status !== undefined && kind.succeeded.includes(status)) return read.job;
      failure = { kind: kind.kind, jobId, status };
      const statusMessage = kind.messageOf(read.job);
      if (statusMessage !== undefined) failure.statusMessage = statusMessage;
      if (status !== undefined && kind.failed.includes(status))
        throw new RefDataJobError('REFDATA_JOB_FAILED', failure);
      waitMs = backoffDelay(polls++, { initialDelayMs, maxDelayMs }, random);
      if (now() - startedAt + waitMs > timeoutMs) throw new RefDataJobError('REFDATA_JOB_TIMEOUT', failure);
    }
    try {
      await sleep(waitMs, options.signal);
    } catch (cause) {
      if (!options.signal?.aborted) throw cause;
      throw new RefDataTransportError('REFDATA_ABORTED', kind.readOperation, 'aborted by the caller', {
        canRetry: false,
        cause,
      });
    }
  }
}

/** Resolves with the FINISHED job; its results can then be read with iterateExtdLookupJobResults. */
export function waitForExtdLookupJob(
  client: Pick<RefDataClient, 'getExtdLookupJob'>,
  jobId: string,
  options: PollOptions = {},
): Promise<Schemas['ExtdLookupJob']> {
  return pollUntilFinal(
    jobId,
    {
      kind: 'extdLookupJob',
      readOperation: 'getExtdLookupJob',
      read: (call) => client.getExtdLookupJob({ path: { id: jobId } }, call),
      statusOf: (job) => job.status,
      progressOf: (job) => job.progress,
      messageOf: (job) => job.statusMessage,
      succeeded: ['FINISHED'],
      failed: ['COULDNT_START', 'DIED', 'CANCELED'],
    },
    options,
  );
}

export function waitForEventStoreInitializerJob(
  client: Pick<RefDataClient, 'getEventStoreInitializerJob'>,
  jobId: string,
  options: PollOptions = {},
): Promise<Schemas['EventStoreInitializerJob']> {
  return pollUntilFinal(
    jobId,
    {
      kind: 'eventStoreInitializerJob',
      readOperation: 'getEventStoreInitializerJob',
      read: (call) => client.getEventStoreInitializerJob({ path: { jobId } }, call),
      statusOf: (job) => job.status,
      progressOf: (job) => job.progress,
      messageOf: (job) => job.message,
      succeeded: ['FINISHED', 'ARCHIVED'],
      failed: ['COULDNT_START', 'DIED'],
    },
    options,
  );
}

/** Resolves with the FINISHED bulk (first results page included); see iterateBulkLookupResults. */
export function waitForBulkLookup(
  client: Pick<RefDataClient, 'getBulkLookup'>,
  bulkId: string,
  options: PollOptions = {},
): Promise<Schemas['BulkLookup']> {
  return pollUntilFinal(
    bulkId,
    {
      kind: 'bulkLookup',
      readOperation: 'getBulkLookup',
      read: (call) => client.getBulkLookup({ path: { id: bulkId } }, call),
      statusOf: (bulk) => bulk.status?.code,
      progressOf: (bulk) => bulk.progress,
      messageOf: (bulk) => bulk.status?.technicalKey,
      succeeded: ['FINISHED'],
      // The spec names a Cancel Bulk group (item 15); a canceled bulk never finishes, and the
      // bulk runner (src/bulk/bulk-runner.ts) counts it final too.
      failed: ['FAILED', 'CANCELED'],
    },
    options,
  );
}
