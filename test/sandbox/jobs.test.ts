// Jobs advance on the sandbox clock: a job is CREATED for a second, then RUNNING for
// jobMsPerPartner per partner of its storage, then FINISHED. The tests move the clock.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RefDataJobError,
  iterateExtdLookupJobResults,
  waitForEventStoreInitializerJob,
  waitForExtdLookupJob,
} from '../../src/refdata/index.ts';
import { CREDENTIALS, startTestSandbox, type TestSandbox } from './support/sandbox-fixtures.ts';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ jobMsPerPartner: 10 });
});
afterAll(() => sandbox.close());

/** storage-1 holds 100 partners: 1 s in CREATED, then 100 x 10 ms RUNNING. */
const STORAGE = 'storage-1';

describe('sandbox EXTD lookup jobs', () => {
  it('goes CREATED, RUNNING with progress, FINISHED with statistics as the clock moves', async () => {
    const { client, clock } = sandbox;
    const job = await client.createExtdLookupJob({ body: { storageId: STORAGE, mode: 'EXTENDED_MATCH' } });
    const read = () => client.getExtdLookupJob({ path: { id: job.id ?? '' } });
    expect(job).toMatchObject({
      status: 'CREATED',
      progress: 0,
      storageId: STORAGE,
      createdBy: 'api-key-user',
    });
    clock.advance(1_000);
    expect(await read()).toMatchObject({ status: 'RUNNING', progress: 0 });
    clock.advance(500);
    expect(await read()).toMatchObject({ status: 'RUNNING', progress: 50 });
    const early = await sandbox.raw('GET', `/extd/lookupjobs/${job.id ?? ''}/results`);
    expect(early.body).toMatchObject({ code: 'INVALID_REQUEST', field: 'path.id' });
    clock.advance(500);
    const finished = await read();
    expect(finished).toMatchObject({ status: 'FINISHED', progress: 100 });
    expect(finished.result?.statistics?.partners).toBe(100);
  });

  it('is awaited by the client, and its results are paged and filtered by businessPartnerId', async () => {
    const job = await sandbox.client.createExtdLookupJob({ body: { storageId: STORAGE } });
    const done = await waitForExtdLookupJob(sandbox.client, job.id ?? '', {
      sleep: async (ms) => sandbox.clock.advance(ms),
      random: () => 0.5,
    });
    expect(done.status).toBe('FINISHED');
    const all = [];
    for await (const item of iterateExtdLookupJobResults(sandbox.client, {
      path: { id: job.id ?? '' },
      query: { limit: 30 },
    })) {
      all.push(item);
    }
    expect(all).toHaveLength(100);
    const wanted = [all[3]?.businessPartnerId ?? '', all[42]?.businessPartnerId ?? ''];
    const filtered = await sandbox.client.listExtdLookupJobResults({
      path: { id: job.id ?? '' },
      query: { businessPartnerId: wanted },
    });
    expect(filtered.values?.map((item) => item.businessPartnerId)).toEqual(wanted);
    expect(filtered.total).toBe(2);
  });

  it('is CANCELED at once over a storage that does not exist; an unknown job is 404', async () => {
    const job = await sandbox.client.createExtdLookupJob({ body: { storageId: 'nope' } });
    expect(job).toMatchObject({ status: 'CANCELED', statusMessage: expect.stringContaining('nope') });
    expect((await sandbox.raw('GET', '/extd/lookupjobs/unknown')).status).toBe(404);
  });
});

describe('sandbox event store initializer jobs', () => {
  it('regression: a startAfter that is no partner of the storage started over from its first partner; now the partners after it in id order', async () => {
    const { client, clock } = sandbox;
    const past = await client.createEventStoreInitializerJob({
      body: { storageId: STORAGE, startAfter: 'BP-999999' },
    });
    const between = await client.createEventStoreInitializerJob({
      body: { storageId: STORAGE, startAfter: 'BP-000010a', limit: 50 },
    });
    clock.advance(10_000);
    expect(await client.getEventStoreInitializerJob({ path: { jobId: past.id ?? '' } })).toMatchObject({
      status: 'FINISHED',
      message: '0 BusinessPartnerCreated events created',
    });
    expect(await client.getEventStoreInitializerJob({ path: { jobId: between.id ?? '' } })).toMatchObject({
      status: 'FINISHED',
      message: '50 BusinessPartnerCreated events created',
    });
  });

  it('runs over the storage partners after startAfter, at most limit, and records the user', async () => {
    const { client, clock } = sandbox;
    const job = await client.createEventStoreInitializerJob({
      body: {
        storageId: STORAGE,
        startAfter: 'BP-000010',
        limit: 50,
        tags: ['initial'],
        featuresOn: ['INITIALIZE'],
      },
    });
    expect(job).toMatchObject({
      status: 'CREATED',
      createdBy: CREDENTIALS.username,
      storageId: STORAGE,
      startAfter: 'BP-000010',
      eventStoreId: `event-store-${STORAGE}`,
    });
    clock.advance(1_000 + 250);
    expect(await client.getEventStoreInitializerJob({ path: { jobId: job.id ?? '' } })).toMatchObject({
      status: 'RUNNING',
      progress: 50,
    });
    clock.advance(250);
    const finished = await client.getEventStoreInitializerJob({ path: { jobId: job.id ?? '' } });
    expect(finished).toMatchObject({
      status: 'FINISHED',
      progress: 100,
      message: '50 BusinessPartnerCreated events created',
    });
  });

  it('has no event store with NO_PERSISTENCE and COULDNT_START without a storage', async () => {
    const transient = await sandbox.client.createEventStoreInitializerJob({
      body: { storageId: STORAGE, featuresOn: ['NO_PERSISTENCE'] },
    });
    expect(transient.eventStoreId).toBeUndefined();
    const missing = await sandbox.client.createEventStoreInitializerJob({ body: { storageId: 'nope' } });
    expect(missing).toMatchObject({ status: 'COULDNT_START', message: expect.stringContaining('nope') });
    expect((await sandbox.raw('GET', '/public/jobs/eventStoreInitializerJobs/unknown')).status).toBe(404);
  });
});

describe('sandbox jobs that die', () => {
  it('stop half-way with DIED and the reason, which the client reports as REFDATA_JOB_FAILED', async () => {
    await sandbox.raw('PUT', '/admin/faults', { body: { jobDeathRate: 1 } });
    try {
      const extd = await sandbox.client.createExtdLookupJob({ body: { storageId: STORAGE } });
      const events = await sandbox.client.createEventStoreInitializerJob({ body: { storageId: STORAGE } });
      sandbox.clock.advance(60_000);
      expect(await sandbox.client.getExtdLookupJob({ path: { id: extd.id ?? '' } })).toMatchObject({
        status: 'DIED',
        progress: 50,
        statusMessage: expect.any(String),
      });
      const error = await waitForEventStoreInitializerJob(sandbox.client, events.id ?? '').catch(
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(RefDataJobError);
      expect(error).toMatchObject({ code: 'REFDATA_JOB_FAILED', status: 'DIED' });
      expect((await sandbox.stats()).jobsDied).toBeGreaterThanOrEqual(2);
    } finally {
      await sandbox.raw('PUT', '/admin/faults', { body: { jobDeathRate: 0 } });
    }
  });
});
