import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForBulkLookup } from '../../src/refdata/index.ts';
import { contentKey } from '../../src/sandbox/state/bulk-audit.ts';
import { bulkTask, knownPartner } from './support/partners.ts';
import { startTestSandbox, type TestSandbox } from './support/sandbox-fixtures.ts';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(() => sandbox.close());

interface Audit {
  bulks: {
    id: string;
    createdAt: number;
    tasks: { taskId: string; contentKey: string; status?: string }[];
  }[];
}
const audit = async () => (await sandbox.raw('GET', '/admin/bulk-audit')).body as unknown as Audit;

describe('sandbox bulk audit (GET /admin/bulk-audit)', () => {
  it('lists every accepted bulk with its task ids and one content key per distinct partner content', async () => {
    await sandbox.raw('POST', '/admin/reset');
    const first = bulkTask('a-1', knownPartner(sandbox.state, 1));
    const second = bulkTask('a-2', knownPartner(sandbox.state, 2));
    const created = [
      await sandbox.client.createBulkLookup({ body: { tasks: [first, second] } }),
      // The first partner again under another task id, in another bulk: paid twice.
      await sandbox.client.createBulkLookup({ body: { tasks: [{ ...first, id: 'b-1' }] } }),
    ];
    for (const bulk of created) await waitForBulkLookup(sandbox.client, bulk.id ?? '', { initialDelayMs: 5 });
    const { bulks } = await audit();
    expect(bulks.map((bulk) => bulk.id)).toEqual(created.map((bulk) => bulk.id));
    expect(bulks[0]?.tasks.map((task) => task.taskId)).toEqual(['a-1', 'a-2']);
    const [a1, a2] = bulks[0]?.tasks ?? [];
    expect(bulks[1]?.tasks).toEqual([{ taskId: 'b-1', contentKey: a1?.contentKey, status: 'OK' }]);
    expect(a2?.contentKey).not.toBe(a1?.contentKey);
    expect(bulks[0]?.createdAt).toBeTypeOf('number');
  });

  it('gives each task its status once it ran, so a retry after an injected FAILED can be told apart', async () => {
    await sandbox.raw('POST', '/admin/reset');
    await sandbox.raw('PUT', '/admin/faults', { body: { taskFailureRate: 1 } });
    const bulk = await sandbox.client.createBulkLookup({
      body: { tasks: [bulkTask('f-1', knownPartner(sandbox.state, 4))] },
    });
    await waitForBulkLookup(sandbox.client, bulk.id ?? '', { initialDelayMs: 5 });
    await sandbox.raw('PUT', '/admin/faults', { body: { taskFailureRate: 0 } });
    expect((await audit()).bulks[0]?.tasks).toEqual([
      { taskId: 'f-1', contentKey: expect.any(String), status: 'FAILED' },
    ]);
  });

  it("regression: of two tasks with one id, both showed the last one's status; now each its own", async () => {
    await sandbox.raw('POST', '/admin/reset');
    const matched = bulkTask('dup', knownPartner(sandbox.state, 1));
    const invalid = { id: 'dup', businessPartner: { jsonRecord: {} } };
    const bulk = await sandbox.client.createBulkLookup({ body: { tasks: [matched, invalid] } });
    await waitForBulkLookup(sandbox.client, bulk.id ?? '', { initialDelayMs: 5 });
    expect((await audit()).bulks[0]?.tasks.map((task) => task.status)).toEqual(['OK', 'INVALID_INPUT']);
  });

  it('gives the same content key whatever the order of the jsonRecord members', () => {
    expect(contentKey({ a: 1, b: { c: 'x', d: [1, 2] } })).toBe(
      contentKey({ b: { d: [1, 2], c: 'x' }, a: 1 }),
    );
    expect(contentKey({ a: 1, b: { d: [2, 1] } })).not.toBe(contentKey({ a: 1, b: { d: [1, 2] } }));
  });

  it('is empty again after a reset, and refused bulks (injected 503) are not in it', async () => {
    await sandbox.raw('POST', '/admin/reset');
    await sandbox.raw('PUT', '/admin/faults', { body: { errorRate: 1 } });
    const refused = await sandbox.raw('POST', '/v4/businesspartners/lookup/bulks', {
      body: { tasks: [bulkTask('c-1', knownPartner(sandbox.state, 3))] },
    });
    await sandbox.raw('PUT', '/admin/faults', { body: { errorRate: 0 } });
    expect(refused.status).toBe(503);
    expect((await audit()).bulks).toEqual([]);
  });
});
