import { afterEach, describe, expect, it } from 'vitest';
import { pipelineEvents } from '../../src/observability/events.ts';
import { isServiceFault } from '../../src/pipeline/errors.ts';
import { RefDataHttpError, RefDataTransportError, retryChannel } from '../../src/refdata/index.ts';
import { clientFor, rejectionOf } from './support/client-fixtures.ts';
import { manualClock, startTestServer, type TestServer } from './support/refdata-test-server.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const bulk = { id: 'bulk-1', status: { code: 'RUNNING' }, progress: 5 };
const failing = (status: number, times: number, headers: Record<string, string> = {}) => {
  let failures = 0;
  return () =>
    failures++ < times
      ? {
          status,
          headers: { 'x-request-id': `req-${failures}`, ...headers },
          body: { code: `E${status}`, message: 'try later' },
        }
      : { body: bulk };
};

describe('retries of the reference data client', () => {
  it('waits the Retry-After seconds of a 429, then repeats the request', async () => {
    server = await startTestServer(failing(429, 1, { 'retry-after': '7' }));
    const clock = manualClock();
    const result = await clientFor(server.url, 'apiKey', {}, clock).getBulkLookup({ path: { id: 'bulk-1' } });
    expect(result).toEqual(bulk);
    expect(clock.sleeps).toEqual([7_000]);
    expect(server.requests).toHaveLength(2);
  });

  it('waits until the HTTP date of a Retry-After', async () => {
    const clock = manualClock();
    const in45Seconds = new Date(clock.now() + 45_000).toUTCString();
    server = await startTestServer(failing(429, 1, { 'retry-after': in45Seconds }));
    await clientFor(server.url, 'apiKey', {}, clock).getBulkLookup({ path: { id: 'bulk-1' } });
    expect(clock.sleeps).toEqual([45_000]);
  });

  it('repeats a create answered 429, because a 429 was not processed', async () => {
    server = await startTestServer(failing(429, 1, { 'retry-after': '1' }));
    const clock = manualClock();
    await clientFor(server.url, 'apiKey', {}, clock).createBulkLookup({ body: { tasks: [] } });
    expect(server.requests).toHaveLength(2);
    expect(clock.sleeps).toEqual([1_000]);
  });

  it('regression: a create answered 408 was not repeated, though a 408 was not processed (the server timed out waiting for the request)', async () => {
    server = await startTestServer(failing(408, 1));
    const clock = manualClock();
    const result = await clientFor(server.url, 'apiKey', {}, clock).createBulkLookup({ body: { tasks: [] } });
    expect(result).toEqual(bulk);
    expect(server.requests).toHaveLength(2);
    expect(clock.sleeps).toEqual([75]);
  });

  it('regression: a 408 still failing after the retries was an unexpected status, not a service fault the pipeline waits out', async () => {
    server = await startTestServer(failing(408, 5));
    const client = clientFor(server.url, 'apiKey', { retry: { maxAttempts: 2 } });
    const error = await rejectionOf(client.createBulkLookup({ body: { tasks: [] } }));
    expect(error).toBeInstanceOf(RefDataHttpError);
    expect(error).toMatchObject({ code: 'REFDATA_REQUEST_TIMEOUT', status: 408, canRetry: true });
    expect(isServiceFault(error as RefDataHttpError)).toBe(true);
    expect(server.requests).toHaveLength(2);
  });

  it.each(['1.5', '-5', '0.5'])(
    'regression: a malformed Retry-After (%s) was read as an HTTP date long past and the 429 repeated at once',
    async (retryAfter) => {
      server = await startTestServer(failing(429, 1, { 'retry-after': retryAfter }));
      const clock = manualClock();
      await clientFor(server.url, 'apiKey', {}, clock).getBulkLookup({ path: { id: 'bulk-1' } });
      // Not a delay-seconds nor an HTTP-date (RFC 9110 10.2.3): ignored, the backoff applies.
      expect(clock.sleeps).toEqual([75]);
      expect(server.requests).toHaveLength(2);
    },
  );

  it('gives up with the 429 when Retry-After exceeds maxRetryAfterMs', async () => {
    server = await startTestServer(failing(429, 1, { 'retry-after': '3600' }));
    const clock = manualClock();
    const client = clientFor(server.url, 'apiKey', { retry: { maxRetryAfterMs: 60_000 } }, clock);
    const error = await rejectionOf(client.getBulkLookup({ path: { id: 'bulk-1' } }));
    expect(error).toMatchObject({ code: 'REFDATA_RATE_LIMITED', status: 429, retryAfterMs: 3_600_000 });
    expect(clock.sleeps).toEqual([]);
  });

  it('does not repeat a create answered 5xx: the server sees one request, the caller a typed error', async () => {
    server = await startTestServer(failing(503, 5));
    const error = await rejectionOf(
      clientFor(server.url, 'apiKey').createBulkLookup({ body: { tasks: [] } }),
    );
    expect(server.requests).toHaveLength(1);
    expect(error).toBeInstanceOf(RefDataHttpError);
    expect(error).toMatchObject({
      code: 'REFDATA_SERVER_ERROR',
      status: 503,
      serviceCode: 'E503',
      operation: 'createBulkLookup',
      requestId: 'req-1',
      canRetry: false,
    });
    expect(error.message).toBe('createBulkLookup failed with HTTP 503 (E503: try later) [request req-1]');
  });

  it('repeats a safe read answered 5xx up to maxAttempts, with growing jittered delays', async () => {
    server = await startTestServer(failing(500, 10));
    const clock = manualClock();
    const error = await rejectionOf(
      clientFor(server.url, 'apiKey', {}, clock).getBulkLookup({ path: { id: 'bulk-1' } }),
    );
    expect(server.requests).toHaveLength(4);
    // random() = 0.5 puts each delay at 3/4 of the ceiling 100, 200, 400 ms.
    expect(clock.sleeps).toEqual([75, 150, 300]);
    expect(error).toMatchObject({
      code: 'REFDATA_SERVER_ERROR',
      status: 500,
      requestId: 'req-4',
      canRetry: true,
    });
  });

  it('succeeds when a safe read recovers within the budget', async () => {
    server = await startTestServer(failing(502, 2));
    const result = await clientFor(server.url, 'apiKey').getBulkLookup({ path: { id: 'bulk-1' } });
    expect(result).toEqual(bulk);
    expect(server.requests).toHaveLength(3);
  });

  it('repeats a safe read after a connection reset', async () => {
    let resets = 0;
    server = await startTestServer(() => (resets++ < 1 ? 'reset' : { body: bulk }));
    const result = await clientFor(server.url, 'apiKey').getBulkLookup({ path: { id: 'bulk-1' } });
    expect(result).toEqual(bulk);
    expect(server.requests).toHaveLength(2);
  });

  it('does not repeat a create after a connection reset, as it may have been processed', async () => {
    server = await startTestServer(() => 'reset');
    const error = await rejectionOf(
      clientFor(server.url, 'apiKey').consumeQuota({ body: { service: { technicalKey: 'EXTD' } } }),
    );
    expect(error).toBeInstanceOf(RefDataTransportError);
    expect(error).toMatchObject({
      code: 'REFDATA_NETWORK_ERROR',
      operation: 'consumeQuota',
      canRetry: false,
    });
    expect(server.requests).toHaveLength(1);
  });

  it('times out an attempt that gets no answer, and does not repeat it for a create', async () => {
    server = await startTestServer(() => 'hang');
    const client = clientFor(server.url, 'apiKey', { timeoutMs: 100 });
    const error = await rejectionOf(client.createExtdLookupJob({ body: { storageId: 'storage-1' } }));
    expect(error).toMatchObject({
      code: 'REFDATA_TIMEOUT',
      operation: 'createExtdLookupJob',
      canRetry: false,
    });
    expect(server.requests).toHaveLength(1);
  });

  it('does not repeat a 400 and reports the field and limit the service named', async () => {
    server = await startTestServer(() => ({
      status: 400,
      body: { code: 'INVALID_REQUEST', message: 'limit too large', field: 'body.limit', limit: 1000 },
    }));
    const error = await rejectionOf(
      clientFor(server.url, 'apiKey').getBulkLookup({ path: { id: 'bulk-1' } }),
    );
    expect(error).toMatchObject({ code: 'REFDATA_BAD_REQUEST', status: 400, canRetry: false });
    expect((error as RefDataHttpError).details).toMatchObject({ field: 'body.limit', limit: 1000 });
    expect(server.requests).toHaveLength(1);
  });

  it('stops waiting when the caller aborts during a backoff', async () => {
    server = await startTestServer(failing(500, 10));
    const controller = new AbortController();
    const client = clientFor(server.url, 'apiKey', {
      sleep: async (_ms, signal) => {
        controller.abort();
        signal?.throwIfAborted();
      },
    });
    const error = await rejectionOf(
      client.getBulkLookup({ path: { id: 'bulk-1' } }, { signal: controller.signal }),
    );
    expect(error).toMatchObject({ code: 'REFDATA_ABORTED', canRetry: false });
    expect(server.requests).toHaveLength(1);
  });

  it('publishes each retry with its delay, and every attempt on the pipeline http channel', async () => {
    server = await startTestServer(failing(503, 1));
    const retries: unknown[] = [];
    const attempts: unknown[] = [];
    const onRetry = (event: unknown) => retries.push(event);
    retryChannel.subscribe(onRetry);
    const stopAttempts = pipelineEvents.http.subscribe((event) => attempts.push(event));
    try {
      await clientFor(server.url, 'apiKey').getBulkLookup({ path: { id: 'bulk-1' } });
    } finally {
      retryChannel.unsubscribe(onRetry);
      stopAttempts();
    }
    expect(retries).toEqual([
      { operation: 'getBulkLookup', attempt: 1, delayMs: 75, code: 'REFDATA_SERVER_ERROR', status: 503 },
    ]);
    expect(attempts).toEqual([
      { operation: 'getBulkLookup', status: 503, seconds: expect.any(Number) },
      { operation: 'getBulkLookup', status: 200, seconds: expect.any(Number) },
    ]);
  });
});
