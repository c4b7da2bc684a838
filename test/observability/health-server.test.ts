import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { reportFailure } from '../../src/cli/failure.ts';
import {
  createMetrics,
  startHealthServer,
  type HealthServer,
  type Readiness,
} from '../../src/observability/index.ts';
import { Redactor } from '../../src/observability/secret-redactor.ts';
import { rawConnection } from '../support/raw-connection.ts';
import { PIPELINE_METRIC_NAMES } from './metric-names.ts';

const servers: HealthServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function started(readiness: () => Readiness): Promise<HealthServer> {
  const server = await startHealthServer({ host: '127.0.0.1', port: 0, metrics: createMetrics(), readiness });
  servers.push(server);
  return server;
}

describe('health server', () => {
  it('listens on a free port when given port 0 and reports its url', async () => {
    const server = await started(() => ({ ready: true, reasons: [] }));
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.url).not.toMatch(/:0$/);
  });

  it('regression: a metrics port in use ended run as an unexpected failure with a stack, exit 1; it is METRICS_LISTEN_FAILED, exit 2', async () => {
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const { port } = holder.address() as { port: number };
    try {
      const failure = await startHealthServer({
        host: '127.0.0.1',
        port,
        metrics: createMetrics(),
        readiness: () => ({ ready: true, reasons: [] }),
      }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({
        code: 'METRICS_LISTEN_FAILED',
        details: { host: '127.0.0.1', port, systemCode: 'EADDRINUSE' },
      });
      expect((failure as Error).message).toContain(`127.0.0.1:${port}`);
      const errorLines: string[] = [];
      const original = console.error;
      console.error = (line: string) => void errorLines.push(line);
      try {
        expect(reportFailure(failure)).toBe(2);
      } finally {
        console.error = original;
      }
      expect(errorLines).toHaveLength(1);
      expect(errorLines[0]).toMatch(/^partner-enrich: METRICS_LISTEN_FAILED: /);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('answers /healthz with 200 while the process lives, even when not ready', async () => {
    const server = await started(() => ({ ready: false, reasons: ['starting'] }));
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('answers /healthz with 503 and the reason once the process goes down after a fatal failure', async () => {
    const state: { failing?: string } = {};
    const server = await startHealthServer({
      host: '127.0.0.1',
      port: 0,
      metrics: createMetrics(),
      readiness: () => ({ ready: true, reasons: [] }),
      failing: () => state.failing,
    });
    servers.push(server);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

    state.failing = 'pipeline: PipelineError: outputs could not be written';
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: 'failing', reason: state.failing });
  });

  it('regression: /healthz and /readyz quoted a secret in an error message they report', async () => {
    const server = await startHealthServer({
      host: '127.0.0.1',
      port: 0,
      metrics: createMetrics(),
      readiness: () => ({ ready: false, reasons: ['registry refused user:top-secret-1'] }),
      failing: () => 'pipeline: SCHEMA_REGISTRY_AUTH_FAILED: refused user:top-secret-1',
      secrets: new Redactor(['top-secret-1']),
    });
    servers.push(server);
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({
      status: 'failing',
      reason: 'pipeline: SCHEMA_REGISTRY_AUTH_FAILED: refused user:[REDACTED]',
    });
    expect(await (await fetch(`${server.url}/readyz`)).json()).toEqual({
      ready: false,
      reasons: ['registry refused user:[REDACTED]'],
    });
  });

  it('answers /readyz with 503 and the reasons until ready, then 200', async () => {
    let readiness: Readiness = {
      ready: false,
      reasons: ['kafka consumer not connected', 'schemas not registered'],
    };
    const server = await started(() => readiness);

    const notReady = await fetch(`${server.url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual(readiness);

    readiness = { ready: true, reasons: [] };
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, reasons: [] });
  });

  it('answers /readyz with 503 when the readiness check itself throws', async () => {
    const server = await started(() => {
      throw new Error('state store closed');
    });
    const response = await fetch(`${server.url}/readyz`);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      ready: false,
      reasons: ['readiness check failed: state store closed'],
    });
  });

  it('serves every pipeline metric at /metrics in the Prometheus text format', async () => {
    const server = await started(() => ({ ready: true, reasons: [] }));
    const response = await fetch(`${server.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    for (const name of PIPELINE_METRIC_NAMES) expect(text).toContain(`# TYPE ${name} `);
  });

  it('stops listening once closed', async () => {
    const server = await startHealthServer({
      host: '127.0.0.1',
      port: 0,
      metrics: createMetrics(),
      readiness: () => ({ ready: true, reasons: [] }),
    });
    await server.close();
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });

  it('regression: close() waited for as long as a keep-alive client kept asking, when a request was being answered as it was called (a failed start of run stayed up with /readyz 503 until the polling stopped, then exited 2)', async () => {
    // A registry stand-in whose first collection is held until close() was called.
    const held = Promise.withResolvers<undefined>();
    let collections = 0;
    const metrics = {
      registry: {
        contentType: 'text/plain; version=0.0.4; charset=utf-8',
        metrics: async () => {
          collections += 1;
          if (collections === 1) await held.promise;
          return '';
        },
      },
    } as unknown as ReturnType<typeof createMetrics>;
    const server = await startHealthServer({
      host: '127.0.0.1',
      port: 0,
      metrics,
      readiness: () => ({ ready: false, reasons: ['pipeline not started'] }),
    });
    // One client asking again as soon as it has an answer, on one kept-alive connection, as a
    // scraper or a harness polling /readyz does.
    const statuses: number[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const response = await fetch(`${server.url}/metrics`).catch(() => undefined);
        if (!response) return;
        statuses.push(response.status);
        await response.text();
      }
    })();
    await expect.poll(() => collections).toBe(1);
    const closed = server.close().then(() => 'closed');
    held.resolve(undefined);
    const outcome = await Promise.race([closed, sleep(3_000).then(() => 'still open while asked')]);
    polling = false;
    await poller;
    expect(outcome).toBe('closed');
    // The request being answered when close() was called got its answer.
    expect(statuses[0]).toBe(200);
  });

  it('regression: close() waited for good on a connection that had sent no request, or part of one (a TCP probe, a port scan, a client cut off mid-request kept a failed start of run up with no end)', async () => {
    const server = await startHealthServer({
      host: '127.0.0.1',
      port: 0,
      metrics: createMetrics(),
      readiness: () => ({ ready: true, reasons: [] }),
    });
    const silent = await rawConnection(server.url);
    const partial = await rawConnection(server.url, 'GET /metrics HTTP/1.1\r\nHost: probe\r\n');
    // The server has taken both connections before close() is called.
    await sleep(100);
    const clientsCut = Promise.all([once(silent, 'close'), once(partial, 'close')]);
    const closed = Promise.all([server.close(), clientsCut]).then(() => 'closed');
    const outcome = await Promise.race([closed, sleep(3_000).then(() => 'still open')]);
    silent.destroy();
    partial.destroy();
    expect(outcome).toBe('closed');
  });

  it('regression: a request for `//` (a port scan, a mistyped scrape path) threw in the request handler, an uncaught exception that made run exit 1; now it is answered 400 and the server goes on serving', async () => {
    const server = await started(() => ({ ready: true, reasons: [] }));
    for (const target of ['//', '//@', '//[']) {
      const connection = await rawConnection(server.url, `GET ${target} HTTP/1.1\r\nHost: probe\r\n\r\n`);
      const chunks: Buffer[] = [];
      connection.on('data', (chunk: Buffer) => chunks.push(chunk));
      const answered = once(connection, 'data').then(() => 'answered');
      const outcome = await Promise.race([answered, sleep(2_000).then(() => 'no answer')]);
      connection.destroy();
      expect(outcome, target).toBe('answered');
      expect(Buffer.concat(chunks).toString('latin1'), target).toMatch(/^HTTP\/1\.1 400 /);
    }
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('answers 404 for any other path and 405 with Allow for any other method', async () => {
    const server = await started(() => ({ ready: true, reasons: [] }));
    expect((await fetch(`${server.url}/status`)).status).toBe(404);
    const posted = await fetch(`${server.url}/readyz`, { method: 'POST' });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET, HEAD');
  });

  it('answers HEAD with the status and no body', async () => {
    const server = await started(() => ({ ready: false, reasons: ['restoring'] }));
    const response = await fetch(`${server.url}/readyz`, { method: 'HEAD' });
    expect(response.status).toBe(503);
    expect(await response.text()).toBe('');
  });

  it('answers 500 when the metrics cannot be collected, and goes on serving', async () => {
    const registry = {
      contentType: 'text/plain',
      metrics: () => Promise.reject(new Error('collect failed')),
    };
    const server = await startHealthServer({
      host: '127.0.0.1',
      port: 0,
      metrics: { registry } as never,
      readiness: () => ({ ready: true, reasons: [] }),
    });
    servers.push(server);
    const failed = await fetch(`${server.url}/metrics`);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toMatchObject({ message: 'collect failed' });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
