import { afterEach, describe, expect, it } from 'vitest';
import {
  RefDataJobError,
  waitForBulkLookup,
  waitForEventStoreInitializerJob,
  waitForExtdLookupJob,
  type JobProgress,
} from '../../src/refdata/index.ts';
import { clientFor, rejectionOf } from './support/client-fixtures.ts';
import { manualClock, startTestServer, type TestServer } from './support/refdata-test-server.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Answers the given job states in order, repeating the last one. */
function statesInOrder(states: Record<string, unknown>[]) {
  let served = 0;
  return () => ({ body: states[Math.min(served++, states.length - 1)] });
}

describe('job helpers', () => {
  it('polls an EXTD lookup job until FINISHED with growing delays, reporting each poll', async () => {
    server = await startTestServer(
      statesInOrder([
        { id: 'job-1', status: 'CREATED', progress: 0 },
        { id: 'job-1', status: 'RUNNING', progress: 40 },
        { id: 'job-1', status: 'RUNNING', progress: 80 },
        { id: 'job-1', status: 'FINISHED', progress: 100 },
      ]),
    );
    const clock = manualClock();
    const progress: JobProgress[] = [];
    const job = await waitForExtdLookupJob(clientFor(server.url, 'apiKey'), 'job-1', {
      initialDelayMs: 1_000,
      now: clock.now,
      sleep: clock.sleep,
      random: () => 1,
      onProgress: (update) => progress.push(update),
    });
    expect(job).toMatchObject({ status: 'FINISHED', progress: 100 });
    expect(clock.sleeps).toEqual([1_000, 2_000, 4_000]);
    expect(progress.map(({ status, progress: percent, polls }) => [status, percent, polls])).toEqual([
      ['CREATED', 0, 1],
      ['RUNNING', 40, 2],
      ['RUNNING', 80, 3],
      ['FINISHED', 100, 4],
    ]);
    expect(server.requests.every((request) => request.path === '/extd/lookupjobs/job-1')).toBe(true);
  });

  it('fails with REFDATA_JOB_FAILED carrying the statusMessage of a job that DIED', async () => {
    server = await startTestServer(
      statesInOrder([{ id: 'job-2', status: 'DIED', statusMessage: 'quota exhausted' }]),
    );
    const clock = manualClock();
    const error = await rejectionOf(
      waitForExtdLookupJob(clientFor(server.url, 'apiKey'), 'job-2', { now: clock.now, sleep: clock.sleep }),
    );
    expect(error).toBeInstanceOf(RefDataJobError);
    expect(error).toMatchObject({ code: 'REFDATA_JOB_FAILED', jobId: 'job-2', status: 'DIED' });
    expect(error.message).toBe('extdLookupJob job-2 ended with status DIED: quota exhausted');
  });

  it('gives up with REFDATA_JOB_TIMEOUT when the time budget runs out', async () => {
    server = await startTestServer(statesInOrder([{ id: 'esi-1', status: 'RUNNING', progress: 3 }]));
    const clock = manualClock();
    const error = await rejectionOf(
      waitForEventStoreInitializerJob(clientFor(server.url, 'apiKey'), 'esi-1', {
        timeoutMs: 10_000,
        initialDelayMs: 1_000,
        random: () => 1,
        now: clock.now,
        sleep: clock.sleep,
      }),
    );
    expect(error).toMatchObject({ code: 'REFDATA_JOB_TIMEOUT', status: 'RUNNING', canRetry: true });
    expect(clock.sleeps).toEqual([1_000, 2_000, 4_000]);
    expect(
      server.requests.every((request) => request.path === '/public/jobs/eventStoreInitializerJobs/esi-1'),
    ).toBe(true);
  });

  it('treats an ARCHIVED event store job as finished', async () => {
    server = await startTestServer(statesInOrder([{ id: 'esi-2', status: 'ARCHIVED', progress: 100 }]));
    const job = await waitForEventStoreInitializerJob(clientFor(server.url, 'apiKey'), 'esi-2');
    expect(job.status).toBe('ARCHIVED');
  });

  it('polls a bulk lookup on its status code and fails on FAILED', async () => {
    server = await startTestServer(
      statesInOrder([
        { id: 'bulk-1', status: { code: 'RUNNING' }, progress: 10 },
        { id: 'bulk-1', status: { code: 'FAILED', technicalKey: 'UPSTREAM_DOWN' } },
      ]),
    );
    const clock = manualClock();
    const error = await rejectionOf(
      waitForBulkLookup(clientFor(server.url, 'apiKey'), 'bulk-1', { now: clock.now, sleep: clock.sleep }),
    );
    expect(error).toMatchObject({ code: 'REFDATA_JOB_FAILED', jobId: 'bulk-1', status: 'FAILED' });
    expect(error.message).toContain('UPSTREAM_DOWN');
  });

  it('regression: a CANCELED bulk was polled until the time budget ran out (REFDATA_JOB_TIMEOUT), though the bulk runner counts it final', async () => {
    server = await startTestServer(
      statesInOrder([{ id: 'bulk-1', status: { code: 'CANCELED', technicalKey: 'CANCELED_BY_USER' } }]),
    );
    const clock = manualClock();
    const error = await rejectionOf(
      waitForBulkLookup(clientFor(server.url, 'apiKey'), 'bulk-1', {
        now: clock.now,
        sleep: clock.sleep,
        timeoutMs: 60_000,
      }),
    );
    expect(error).toMatchObject({ code: 'REFDATA_JOB_FAILED', jobId: 'bulk-1', status: 'CANCELED' });
    expect(server.requests).toHaveLength(1);
  });

  describe('a read that fails for a reason that may pass is a missed poll, read again', () => {
    const ESI_PATH = '/public/jobs/eventStoreInitializerJobs/esi-3';
    /** One attempt per read, so that each failed request is one missed poll. */
    const singleAttempt = (url: string) => clientFor(url, 'apiKey', { retry: { maxAttempts: 1 } });

    it('regression: a connection reset ended the wait for a running job; now it is ridden out with growing delays', async () => {
      let served = 0;
      server = await startTestServer(() => {
        served++;
        if (served === 1) return { body: { id: 'esi-3', status: 'RUNNING', progress: 10 } };
        if (served <= 4) return served === 3 ? { status: 503 } : 'reset';
        return { body: { id: 'esi-3', status: 'FINISHED', progress: 100 } };
      });
      const clock = manualClock();
      const job = await waitForEventStoreInitializerJob(singleAttempt(server.url), 'esi-3', {
        initialDelayMs: 1_000,
        random: () => 1,
        now: clock.now,
        sleep: clock.sleep,
      });
      expect(job.status).toBe('FINISHED');
      // The poll's 1 s, then the missed polls' 1, 2 and 4 s.
      expect(clock.sleeps).toEqual([1_000, 1_000, 2_000, 4_000]);
      expect(server.requestsTo(ESI_PATH)).toHaveLength(5);
    });

    it("waits a 429's Retry-After before reading again", async () => {
      let served = 0;
      server = await startTestServer(() =>
        ++served === 1
          ? { status: 429, headers: { 'retry-after': '7' } }
          : { body: { id: 'esi-3', status: 'FINISHED' } },
      );
      const clock = manualClock();
      await waitForEventStoreInitializerJob(singleAttempt(server.url), 'esi-3', {
        now: clock.now,
        sleep: clock.sleep,
      });
      expect(clock.sleeps).toEqual([7_000]);
    });

    it('gives up after maxMissedPolls in a row with REFDATA_JOB_UNREACHABLE naming the job, its last status and the cause', async () => {
      let served = 0;
      server = await startTestServer(() =>
        ++served === 1 ? { body: { id: 'esi-3', status: 'RUNNING', progress: 10 } } : { status: 503 },
      );
      const clock = manualClock();
      const error = await rejectionOf(
        waitForEventStoreInitializerJob(singleAttempt(server.url), 'esi-3', {
          maxMissedPolls: 3,
          random: () => 1,
          now: clock.now,
          sleep: clock.sleep,
        }),
      );
      expect(error).toBeInstanceOf(RefDataJobError);
      expect(error).toMatchObject({
        code: 'REFDATA_JOB_UNREACHABLE',
        jobId: 'esi-3',
        status: 'RUNNING',
        canRetry: true,
        details: { causeCode: 'REFDATA_SERVER_ERROR' },
      });
      expect(error.message).toBe(
        'eventStoreInitializerJob esi-3 could not be read (last status RUNNING): ' +
          'getEventStoreInitializerJob failed with HTTP 503',
      );
      expect(server.requestsTo(ESI_PATH)).toHaveLength(4);
    });

    it('passes on at once a failure that reading again cannot mend (404)', async () => {
      server = await startTestServer(() => ({ status: 404 }));
      const clock = manualClock();
      const error = await rejectionOf(
        waitForEventStoreInitializerJob(singleAttempt(server.url), 'esi-3', {
          now: clock.now,
          sleep: clock.sleep,
        }),
      );
      expect(error).toMatchObject({ code: 'REFDATA_NOT_FOUND' });
      expect(server.requestsTo(ESI_PATH)).toHaveLength(1);
    });
  });
});
