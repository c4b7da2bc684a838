// The bulk runner over the reference data client, against a scripted service over HTTP: the
// answers the sandbox never gives (a repeated cursor, a created bulk without a body).
import { afterEach, describe, expect, it } from 'vitest';
import { BulkLedger, memoryLedgerStore } from '../../src/bulk/bulk-ledger.ts';
import { BulkRunner } from '../../src/bulk/bulk-runner.ts';
import { BulkError } from '../../src/bulk/errors.ts';
import { refDataBulkApi } from '../../src/bulk/refdata-bulk-api.ts';
import { RefDataPagingError } from '../../src/refdata/index.ts';
import { clientFor, rejectionOf } from '../refdata/support/client-fixtures.ts';
import { startTestServer, type Handler, type TestServer } from '../refdata/support/refdata-test-server.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function runnerFor(handler: Handler): Promise<BulkRunner> {
  server = await startTestServer(handler);
  return new BulkRunner(
    refDataBulkApi(clientFor(server.url, 'apiKey')),
    new BulkLedger(memoryLedgerStore()),
    {
      polling: { initialDelayMs: 1, maxDelayMs: 1, pageSize: 2, maxPolls: 3 },
      lookup: { matchingThreshold: 0.5, maxCandidates: 50, featuresOn: [], featuresOff: [] },
      sleep: () => Promise.resolve(),
    },
  );
}

const finished = { code: 'FINISHED' };
const result = (taskId: string) => ({ taskId, status: { code: 'OK' }, values: [] });

describe('bulk runner over the reference data client', () => {
  it('reads every result page, sending each nextStartAfter as startAfter', async () => {
    const pages: Record<string, object> = {
      '': { id: 'b1', status: finished, results: [result('t1'), result('t2')], nextStartAfter: '2' },
      '2': { id: 'b1', status: finished, results: [result('t3')] },
    };
    const runner = await runnerFor((request) => ({ body: pages[request.query.get('startAfter') ?? ''] }));
    const results = await runner.collect('b1');
    expect([...results.keys()]).toEqual(['t1', 't2', 't3']);
    expect(server?.requests.map((request) => request.query.get('startAfter'))).toEqual([null, '2']);
  });

  it('regression: a result page that handed back the cursor it was asked with was read again and again, never ending', async () => {
    // Stops repeating after 20 reads, so that the old loop ends and the test can fail.
    let reads = 0;
    const runner = await runnerFor(() => {
      reads += 1;
      return {
        body: {
          id: 'b1',
          status: finished,
          results: [result(`t${reads}`)],
          ...(reads < 20 ? { nextStartAfter: '2' } : {}),
        },
      };
    });
    const error = await rejectionOf(runner.collect('b1'));
    expect(error).toBeInstanceOf(RefDataPagingError);
    expect(error).toMatchObject({ code: 'REFDATA_PAGE_CURSOR_REPEATED', canRetry: false });
    expect(reads).toBe(2);
  });

  it('regression: result pages whose cursors went round (A, B, A, ...) were read for ever, the bulk holding its slot and its records never committed', async () => {
    let reads = 0;
    const runner = await runnerFor((request) => {
      reads += 1;
      const next = request.query.get('startAfter') === 'A' ? 'B' : 'A';
      return {
        body: {
          id: 'b1',
          status: finished,
          results: [result(`t${reads}`)],
          ...(reads < 50 ? { nextStartAfter: next } : {}),
        },
      };
    });
    const error = await rejectionOf(runner.collect('b1'));
    expect(error).toMatchObject({ code: 'REFDATA_PAGE_CURSOR_REPEATED', details: { cursor: 'A' } });
    expect(reads).toBe(3);
  });

  it('regression: a bulk create answered 200 with an empty body failed with an untyped TypeError, not BULK_CREATED_WITHOUT_ID', async () => {
    const runner = await runnerFor(() => ({ raw: '' }));
    const error = await rejectionOf(runner.submit('s1', []));
    expect(error).toBeInstanceOf(BulkError);
    expect(error).toMatchObject({ code: 'BULK_CREATED_WITHOUT_ID', canRetry: false });
    expect(server?.requests).toHaveLength(1);
  });
});
