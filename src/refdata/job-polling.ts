// Waiting for asynchronous work (EXTD lookup jobs, event store initializer jobs, bulk lookups):
// poll with exponential backoff and jitter until a final status, reporting each poll. The
// spec lists the statuses but not the transitions, so "final" is our reading of their names:
// FINISHED (and ARCHIVED for event store jobs) succeed; COULDNT_START, DIED, CANCELED and a
// bulk's FAILED (or CANCELED) fail; everything else, UNKNOWN included, keeps the poll going.

import { setTimeout as delay } from 'node:timers/promises';
import type { RefDataClient } from './client.ts';
import { RefDataJobError, RefDataTransportError, type JobFailure } from './errors.ts';
import type { CallOptions, Schemas } from './operation-types.ts';
import { backoffDelay } from '../retry/backoff.ts';
import type { RetryEnvironment } from './retry-policy.ts';

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
  /** Overall budget; exceeding it fails with REFDATA_JOB_TIMEOUT. */
  timeoutMs?: number;
  onProgress?: (progress: JobProgress) => void;
  signal?: AbortSignal;
}

const POLL_DEFAULTS = { initialDelayMs: 1_000, maxDelayMs: 30_000, timeoutMs: 30 * 60_000 };

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
  const { initialDelayMs, maxDelayMs, timeoutMs } = { ...POLL_DEFAULTS, ...options };
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? ((ms: number, signal?: AbortSignal) => delay(ms, undefined, { signal }));
  const call: CallOptions = options.signal ? { signal: options.signal } : {};
  const startedAt = now();
  for (let polls = 1; ; polls++) {
    const job = await kind.read(call);
    const status = kind.statusOf(job);
    options.onProgress?.({
      jobId,
      status,
      progress: kind.progressOf(job),
      polls,
      elapsedMs: now() - startedAt,
    });
    if (status !== undefined && kind.succeeded.includes(status)) return job;
    const failure: JobFailure = { kind: kind.kind, jobId, status };
    const statusMessage = kind.messageOf(job);
    if (statusMessage !== undefined) failure.statusMessage = statusMessage;
    if (status !== undefined && kind.failed.includes(status))
      throw new RefDataJobError('REFDATA_JOB_FAILED', failure);
    const waitMs = backoffDelay(polls, { initialDelayMs, maxDelayMs }, random);
    if (now() - startedAt + waitMs > timeoutMs) throw new RefDataJobError('REFDATA_JOB_TIMEOUT', failure);
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
