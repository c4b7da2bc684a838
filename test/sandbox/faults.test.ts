import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RefDataHttpError, RefDataTransportError, waitForBulkLookup } from '../../src/refdata/index.ts';
import { bulkTask, knownPartner } from './support/partners.ts';
import { startTestSandbox, type TestSandbox } from './support/sandbox-fixtures.ts';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(() => sandbox.close());

const NO_FAULTS = {
  latencyMs: 0,
  latencyJitterMs: 0,
  errorRate: 0,
  throttleRate: 0,
  resetRate: 0,
  retryAfterSeconds: 1,
  taskFailureRate: 0,
  jobDeathRate: 0,
  credentialsRevoked: false,
  overLimit: false,
  frozen: false,
};

const setFaults = (faults: Record<string, unknown>) => sandbox.raw('PUT', '/admin/faults', { body: faults });
const statusesOf = async (count: number) => {
  const statuses = [];
  for (let i = 0; i < count; i++)
    statuses.push((await sandbox.raw('GET', '/configurations/businesspartnerlookup')).status);
  return statuses;
};

describe('sandbox fault injection through the admin endpoint', () => {
  it('starts with no faults and reads back what PUT changed', async () => {
    expect((await sandbox.raw('GET', '/admin/faults')).body).toEqual(NO_FAULTS);
    const changed = await setFaults({ latencyMs: 5, latencyJitterMs: 5 });
    expect(changed.body).toEqual({ ...NO_FAULTS, latencyMs: 5, latencyJitterMs: 5 });
    expect((await sandbox.raw('GET', '/configurations/businesspartnerlookup')).status).toBe(200);
    await setFaults({ latencyMs: 0, latencyJitterMs: 0 });
  });

  it('answers 429 with Retry-After while throttling is on, and serves again once it is off', async () => {
    await setFaults({ throttleRate: 1, retryAfterSeconds: 7 });
    const throttled = await sandbox.raw('GET', '/configurations/businesspartnerlookup');
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('retry-after')).toBe('7');
    expect(throttled.body.code).toBe('RATE_LIMITED');
    const error = await sandbox.client.listLookupConfigurations().catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RefDataHttpError);
    expect((error as RefDataHttpError).retryAfterMs).toBe(7_000);
    expect((await sandbox.raw('GET', '/admin/stats')).status).toBe(200);
    await setFaults({ throttleRate: 0 });
    expect((await sandbox.raw('GET', '/configurations/businesspartnerlookup')).status).toBe(200);
  });

  it('answers 503 while the error rate is 1, without processing the request', async () => {
    await sandbox.raw('POST', '/admin/reset');
    await setFaults({ errorRate: 1 });
    const failed = await sandbox.raw('POST', '/v4/businesspartners/lookup/bulks', { body: { tasks: [] } });
    expect(failed.status).toBe(503);
    expect(failed.body.code).toBe('INJECTED_SERVER_ERROR');
    await setFaults({ errorRate: 0 });
    expect(await sandbox.stats()).toMatchObject({ bulkSubmissions: 0, injectedServerErrors: 1 });
  });

  it('resets the connection without an answer while the reset rate is 1, without processing the request', async () => {
    await sandbox.raw('POST', '/admin/reset');
    await setFaults({ resetRate: 1 });
    const error = await sandbox.client
      .createBulkLookup({ body: { tasks: [bulkTask('t1', knownPartner(sandbox.state, 2))] } })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RefDataTransportError);
    expect(error).toMatchObject({ code: 'REFDATA_NETWORK_ERROR', systemCode: 'ECONNRESET' });
    expect((await sandbox.raw('GET', '/admin/stats')).status).toBe(200);
    await setFaults({ resetRate: 0 });
    expect(await sandbox.stats()).toMatchObject({ bulkSubmissions: 0, injectedResets: 1 });
    expect((await sandbox.raw('GET', '/configurations/businesspartnerlookup')).status).toBe(200);
  });

  it('refuses the right API key with 403 while credentials are revoked (no credentials stay 401), and accepts it once restored', async () => {
    await setFaults({ credentialsRevoked: true });
    const refused = await sandbox.raw('GET', '/configurations/businesspartnerlookup');
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain('credentials revoked');
    const error = await sandbox.client.listLookupConfigurations().catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: 'REFDATA_AUTH_FAILED', status: 403 });
    const unauthenticated = await sandbox.raw('GET', '/configurations/businesspartnerlookup', {
      anonymous: true,
    });
    expect(unauthenticated.status).toBe(401);
    await setFaults({ credentialsRevoked: false });
    expect((await sandbox.raw('GET', '/configurations/businesspartnerlookup')).status).toBe(200);
  });

  it('holds API requests unprocessed while frozen and processes them once thawed', async () => {
    await sandbox.raw('POST', '/admin/reset');
    await setFaults({ frozen: true });
    const held = sandbox.client.createBulkLookup({
      body: { tasks: [bulkTask('t1', knownPartner(sandbox.state, 2))] },
    });
    // Admin routes still answer: the request has come in and waits, unprocessed.
    await vi.waitFor(async () =>
      expect((await sandbox.stats()).requestsByOperation.createBulkLookup).toBe(1),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await sandbox.stats()).toMatchObject({ bulkSubmissions: 0 });
    await setFaults({ frozen: false });
    expect((await held).id).toBeDefined();
    expect(await sandbox.stats()).toMatchObject({ bulkSubmissions: 1 });
  });

  it("regression: a frozen sandbox went on running its bulks' tasks in the background (two reads of the audit differed); now nothing runs until thawed", async () => {
    const slow = await startTestSandbox({ bulkTasksPerTurn: 1 });
    try {
      const tasks = Array.from({ length: 1_000 }, (_, i) =>
        bulkTask(`t${i}`, knownPartner(slow.state, i % 50)),
      );
      const bulks = [];
      for (let i = 0; i < 3; i++) bulks.push(await slow.client.createBulkLookup({ body: { tasks } }));
      await slow.raw('PUT', '/admin/faults', { body: { frozen: true } });
      const ran = async () => {
        const { bulks: audited } = (await slow.raw('GET', '/admin/bulk-audit')).body as {
          bulks: { tasks: { status?: string }[] }[];
        };
        return audited.flatMap((bulk) => bulk.tasks).filter((task) => task.status !== undefined).length;
      };
      const whenFrozen = await ran();
      expect(whenFrozen).toBeLessThan(3_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await ran()).toBe(whenFrozen);
      await slow.raw('PUT', '/admin/faults', { body: { frozen: false } });
      await vi.waitFor(async () => expect(await ran()).toBe(3_000), { timeout: 30_000, interval: 50 });
    } finally {
      await slow.close();
    }
  });

  it('regression: a latency over 2^31-1 ms (a hung service, simulated) was taken and came to about 1 ms; now refused', async () => {
    const refused = await setFaults({ latencyMs: 3_000_000_000 });
    expect(refused.status).toBe(400);
    expect((await sandbox.raw('GET', '/admin/faults')).body).toMatchObject({ latencyMs: 0 });
  });

  it('draws the same faults for the same seed: a reset replays the sequence', async () => {
    await sandbox.raw('POST', '/admin/reset');
    await setFaults({ errorRate: 0.5 });
    const first = await statusesOf(20);
    await sandbox.raw('POST', '/admin/reset');
    await setFaults({ errorRate: 0.5 });
    expect(await statusesOf(20)).toEqual(first);
    expect(first).toContain(503);
    expect(first).toContain(200);
    await sandbox.raw('POST', '/admin/reset');
  });

  it('fails bulk tasks with FAILED at the task failure rate', async () => {
    await setFaults({ taskFailureRate: 1 });
    const bulk = await sandbox.client.createBulkLookup({
      body: { tasks: [bulkTask('t1', knownPartner(sandbox.state, 2))] },
    });
    const finished = await waitForBulkLookup(sandbox.client, bulk.id ?? '', { initialDelayMs: 5 });
    expect(finished.results?.[0]?.status).toMatchObject({ code: 'FAILED' });
    expect(finished.results?.[0]?.values).toEqual([]);
    expect((await sandbox.stats()).failedBulkTasks).toBe(1);
    await setFaults({ taskFailureRate: 0 });
  });

  it('rejects fault settings out of range with 400 naming the member', async () => {
    const response = await setFaults({ errorRate: 2 });
    expect(response.status).toBe(400);
    expect(response.body.field).toBe('body.errorRate');
  });

  it('resets faults to the start options, counters to zero and stored state to the seed', async () => {
    await setFaults({ errorRate: 0.3 });
    await sandbox.client.createFetchConfiguration({ body: { name: 'temporary', configuration: {} } });
    await sandbox.raw('POST', '/admin/reset');
    expect((await sandbox.raw('GET', '/admin/faults')).body).toEqual(NO_FAULTS);
    const stats = await sandbox.stats();
    expect(stats.requestsByOperation).toEqual({});
    expect((await sandbox.client.listFetchConfigurations()).total).toBe(1);
  });

  it('counts requests per operation', async () => {
    await sandbox.raw('POST', '/admin/reset');
    await sandbox.client.listFetchConfigurations();
    await sandbox.client.listFetchConfigurations();
    await sandbox.client.getQuotaUsage({
      body: { values: [{ service: { technicalKey: 'X' }, organization: { id: 'o' } }] },
    });
    expect((await sandbox.stats()).requestsByOperation).toEqual({
      listFetchConfigurations: 2,
      getQuotaUsage: 1,
    });
  });
});

describe('sandbox faults from the start options', () => {
  it('throttles from the first request when started with throttleRate 1', async () => {
    const throttled = await startTestSandbox({ faults: { throttleRate: 1 } });
    try {
      expect((await throttled.raw('GET', '/configurations/businesspartnerlookup')).status).toBe(429);
      expect((await throttled.raw('GET', '/admin/faults')).body).toMatchObject({ throttleRate: 1 });
    } finally {
      await throttled.close();
    }
  });

  it('regression: a PUT naming one member put every other back to its default (latency 300 ms from the start options became 0, a freeze ended); now only the members named change', async () => {
    const slowed = await startTestSandbox({ faults: { latencyMs: 300, taskFailureRate: 0.2 } });
    try {
      await slowed.raw('PUT', '/admin/faults', { body: { frozen: true } });
      const changed = await slowed.raw('PUT', '/admin/faults', { body: { errorRate: 0.1 } });
      expect(changed.body).toEqual({
        ...NO_FAULTS,
        latencyMs: 300,
        taskFailureRate: 0.2,
        frozen: true,
        errorRate: 0.1,
      });
      expect((await slowed.raw('GET', '/admin/faults')).body).toEqual(changed.body);
    } finally {
      await slowed.raw('PUT', '/admin/faults', { body: { frozen: false } });
      await slowed.close();
    }
  });
});
