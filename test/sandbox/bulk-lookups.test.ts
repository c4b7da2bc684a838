import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iterateBulkLookupResults, waitForBulkLookup } from '../../src/refdata/index.ts';
import { buildSandboxApp } from '../../src/sandbox/index.ts';
import { bulkTask, knownPartner } from './support/partners.ts';
import {
  CREDENTIALS,
  TEST_ORGS,
  startTestSandbox,
  until,
  type TestSandbox,
} from './support/sandbox-fixtures.ts';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ bulkTasksPerTurn: 5 });
});
afterAll(() => sandbox.close());

const tasksFor = (count: number, from = 0) =>
  Array.from({ length: count }, (_, index) =>
    bulkTask(`task-${index}`, knownPartner(sandbox.state, from + index)),
  );

const poll = { initialDelayMs: 5, maxDelayMs: 20 };

describe('sandbox bulk lookup lifecycle', () => {
  it('is CREATED on submission, then RUNNING with rising progress, then FINISHED with every result', async () => {
    const created = await sandbox.client.createBulkLookup({ body: { tasks: tasksFor(60) } });
    expect(created).toMatchObject({ status: { code: 'CREATED' }, progress: 0, results: [] });
    const seen: { code: string | undefined; progress: number | undefined }[] = [];
    const finished = await waitForBulkLookup(sandbox.client, created.id ?? '', {
      ...poll,
      onProgress: ({ status, progress }) => seen.push({ code: status, progress }),
    });
    expect(finished.status?.code).toBe('FINISHED');
    expect(finished.progress).toBe(100);
    expect(finished.finishedAt).toBeDefined();
    const progress = seen.map((sample) => sample.progress ?? 0);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(seen.every((sample) => ['CREATED', 'RUNNING', 'FINISHED'].includes(sample.code ?? ''))).toBe(true);
  });

  it('pages the results with limit and startAfter/nextStartAfter, each with candidates and a golden record', async () => {
    const tasks = tasksFor(25, 100);
    const created = await sandbox.client.createBulkLookup({ body: { tasks } });
    await waitForBulkLookup(sandbox.client, created.id ?? '', poll);
    const firstPage = await sandbox.client.getBulkLookup({
      path: { id: created.id ?? '' },
      query: { limit: 10 },
    });
    expect(firstPage.results).toHaveLength(10);
    expect(firstPage.nextStartAfter).toBe('10');
    const results = [];
    for await (const result of iterateBulkLookupResults(sandbox.client, {
      path: { id: created.id ?? '' },
      query: { limit: 7 },
    })) {
      results.push(result);
    }
    expect(results.map((result) => result.taskId)).toEqual(tasks.map((task) => task.id));
    const first = results[0];
    expect(first?.status?.code).toBe('OK');
    expect(first?.values?.[0]?.svcId).toBe(knownPartner(sandbox.state, 100).svcId);
    expect(first?.values?.[0]?.score).toBeGreaterThan(0.5);
    expect(first?.goldenRecord?.svcId).toBeDefined();
  });

  it('marks a task with nothing to compare INVALID_INPUT and finishes the others', async () => {
    const created = await sandbox.client.createBulkLookup({
      body: { tasks: [{ id: 'empty', businessPartner: { jsonRecord: {} } }, ...tasksFor(1, 5)] },
    });
    const finished = await waitForBulkLookup(sandbox.client, created.id ?? '', poll);
    expect(finished.results?.map((result) => [result.taskId, result.status?.code])).toEqual([
      ['empty', 'INVALID_INPUT'],
      ['task-0', 'OK'],
    ]);
  });

  it('answers 404 for an unknown bulk and 400 for a results page of 0', async () => {
    const unknown = await sandbox.raw('GET', '/v4/businesspartners/lookup/bulks/unknown');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('NOT_FOUND');
    const created = await sandbox.client.createBulkLookup({ body: { tasks: [] } });
    const zero = await sandbox.raw('GET', `/v4/businesspartners/lookup/bulks/${created.id ?? ''}?limit=0`);
    expect(zero.body).toMatchObject({ field: 'query.limit', limit: 1 });
  });

  it('counts each submission and its tasks once', async () => {
    await sandbox.raw('POST', '/admin/reset');
    await sandbox.client.createBulkLookup({ body: { tasks: tasksFor(3) } });
    await sandbox.client.createBulkLookup({ body: { tasks: tasksFor(4) } });
    expect(await sandbox.stats()).toMatchObject({ bulkSubmissions: 2, bulkTasks: 7 });
  });
});

describe('sandbox bulk runner', () => {
  it('matches bulkTasksPerTurn tasks per event-loop turn, so a poll sees RUNNING with partial progress', async () => {
    const { app, state } = buildSandboxApp({
      orgs: TEST_ORGS,
      seed: 7,
      bulkTasksPerTurn: 1,
      apiKey: CREDENTIALS.apiKey,
    });
    const tasks = Array.from({ length: 50 }, (_, index) => bulkTask(`t${index}`, knownPartner(state, index)));
    const created = await app.inject({
      method: 'POST',
      url: '/v4/businesspartners/lookup/bulks',
      headers: { 'x-api-key': CREDENTIALS.apiKey },
      payload: { tasks },
    });
    const bulk = state.bulks.get(created.json<{ id: string }>().id);
    await new Promise((resolve) => setImmediate(resolve));
    expect(bulk?.status).toBe('RUNNING');
    expect(bulk?.results.length).toBeGreaterThan(0);
    expect(bulk?.results.length).toBeLessThan(50);
    await until(
      async () => bulk?.status,
      (status) => status === 'FINISHED',
    );
    await app.close();
  });
});

describe('sandbox bulk lookup in instant mode', () => {
  it('answers the submission FINISHED with results, and caches outcomes per task content', async () => {
    const instant = await startTestSandbox({ mode: 'instant' });
    try {
      const tasks = [
        bulkTask('a', knownPartner(instant.state, 1)),
        bulkTask('b', knownPartner(instant.state, 1)),
      ];
      const bulk = await instant.client.createBulkLookup({ body: { tasks } });
      expect(bulk).toMatchObject({ status: { code: 'FINISHED' }, progress: 100 });
      expect(bulk.results?.map((result) => result.taskId)).toEqual(['a', 'b']);
      expect(bulk.results?.[1]?.values).toEqual(bulk.results?.[0]?.values);
    } finally {
      await instant.close();
    }
  });
});
