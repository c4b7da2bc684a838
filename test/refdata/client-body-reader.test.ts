import { afterEach, describe, expect, it } from 'vitest';
import { readBulkPage } from '../../src/bulk/bulk-page-reader.ts';
import { MAX_RESPONSE_BYTES } from '../../src/refdata/http-exchange.ts';
import { clientFor, rejectionOf } from './support/client-fixtures.ts';
import { startTestServer, type TestServer } from './support/refdata-test-server.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a bulk read whose body is read as it is parsed (readBulkLookup)', () => {
  it('hands the body to the reader and repeats a failed read as getBulkLookup does', async () => {
    let answers = 0;
    server = await startTestServer(() =>
      answers++ === 0
        ? { status: 503, body: { code: 'E503', message: 'try later' } }
        : { body: { id: 'bulk-1', status: { code: 'FINISHED' }, progress: 100, results: [] } },
    );
    const client = clientFor(server.url, 'apiKey');
    const page = await client.readBulkLookup(readBulkPage, { path: { id: 'bulk-1' }, query: { limit: 500 } });
    expect(page).toEqual({ id: 'bulk-1', status: 'FINISHED', progress: 100, results: [] });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]?.query.get('limit')).toBe('500');
  });

  it('regression: a body that starts with a UTF-8 byte order mark is read as JSON (text() dropped the mark, the bytes kept it)', async () => {
    const page = { id: 'bulk-1', status: { code: 'FINISHED' }, progress: 100, results: [] };
    server = await startTestServer(() => ({ raw: `\uFEFF${JSON.stringify(page)}` }));
    const client = clientFor(server.url, 'apiKey');
    expect(await client.readBulkLookup(readBulkPage, { path: { id: 'bulk-1' } })).toEqual({
      id: 'bulk-1',
      status: 'FINISHED',
      progress: 100,
      results: [],
    });
    expect(await client.getBulkLookup({ path: { id: 'bulk-1' } })).toMatchObject({
      id: 'bulk-1',
      progress: 100,
    });
  });

  it('fails with REFDATA_INVALID_RESPONSE, not retried, when the reader refuses the body', async () => {
    server = await startTestServer(() => ({ body: undefined }));
    const client = clientFor(server.url, 'apiKey');
    const error = await rejectionOf(client.readBulkLookup(readBulkPage, { path: { id: 'bulk-1' } }));
    expect(error).toMatchObject({ code: 'REFDATA_INVALID_RESPONSE', canRetry: false });
    expect(server.requests).toHaveLength(1);
  });

  it('regression: a body of any size was read whole (a faulty hop streaming within the time-out filled the heap); past MAX_RESPONSE_BYTES it is REFDATA_INVALID_RESPONSE, not retried', async () => {
    server = await startTestServer(() => ({ raw: `{"padding": "${' '.repeat(MAX_RESPONSE_BYTES)}"}` }));
    const client = clientFor(server.url, 'apiKey');
    const error = await rejectionOf(client.readBulkLookup(readBulkPage, { path: { id: 'bulk-1' } }));
    expect(error).toMatchObject({ code: 'REFDATA_INVALID_RESPONSE', canRetry: false });
    expect(error.message).toContain(`response body over ${MAX_RESPONSE_BYTES} bytes`);
    expect(server.requests).toHaveLength(1);
  });
});
