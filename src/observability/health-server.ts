// The operations endpoint: Prometheus scrapes /metrics, the orchestrator probes /healthz
// (restart when it fails) and /readyz (route no traffic, count no capacity, while it fails).
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ObservabilityError } from './errors.ts';
import type { Metrics } from './metrics.ts';
import { processSecrets, type Redactor } from './secret-redactor.ts';

export interface Readiness {
  ready: boolean;
  /** Why not ready, e.g. "kafka consumer not connected"; empty when ready. */
  reasons: string[];
}

export interface HealthServerOptions {
  host: string;
  /** 0 picks a free port; the chosen one is in the returned url. */
  port: number;
  metrics: Pick<Metrics, 'registry'>;
  readiness: () => Readiness;
  /** Why the process is going down for good, if it is; /healthz fails from then on. Alive when absent. */
  failing?: () => string | undefined;
  /** Replaced in every answer (reasons quote error messages); the process's secrets when absent. */
  secrets?: Redactor;
}

export interface HealthServer {
  /** e.g. http://127.0.0.1:9464 */
  url: string;
  close(): Promise<void>;
}

function probe(readiness: () => Readiness): Readiness {
  try {
    return readiness();
  } catch (error) {
    // A readiness check that throws is itself a reason not to take traffic.
    return { ready: false, reasons: [`readiness check failed: ${(error as Error).message}`] };
  }
}

const secretsOf = (options: HealthServerOptions): Redactor => options.secrets ?? processSecrets;

type Reply = { status: number; contentType: string; body: string };

const json = (status: number, value: unknown): Reply => ({
  status,
  contentType: 'application/json; charset=utf-8',
  body: JSON.stringify(value),
});

async function answer(path: string, options: HealthServerOptions): Promise<Reply> {
  switch (path) {
    case '/metrics': {
      const { registry } = options.metrics;
      return { status: 200, contentType: registry.contentType, body: await registry.metrics() };
    }
    // Alive as long as the event loop answers and nothing fatal happened; anything deeper belongs
    // to readiness. A process on its way out after a fatal failure is not healthy, even while
    // it still answers.
    case '/healthz': {
      const reason = options.failing?.();
      return reason === undefined
        ? json(200, { status: 'ok' })
        : json(503, { status: 'failing', reason: secretsOf(options).redact(reason) });
    }
    case '/readyz': {
      const { ready, reasons } = probe(options.readiness);
      const secrets = secretsOf(options);
      return json(ready ? 200 : 503, { ready, reasons: reasons.map((reason) => secrets.redact(reason)) });
    }
    default:
      return json(404, { error: 'Not Found', message: `no route ${path}` });
  }
}

/**
 * The request target's path; undefined when it is none. node:http takes targets such as `//` or
 * `//@` that URL refuses: thrown in the request handler, one such request (a port scan, a
 * mistyped scrape path) was an uncaught exception, and `run` exited 1.
 */
function pathOf(target = '/'): string | undefined {
  try {
    return new URL(target, 'http://localhost').pathname;
  } catch {
    return undefined;
  }
}

// node:http, not fastify: three fixed GET routes need no router, and importing fastify (80
// modules) took about 60 ms of the CPU `run` spends from exec to ready (docs/CONTAINER.md).
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  // What close() cuts: every connection but those with a request being answered.
  const connections = new Set<Socket>();
  const answering = new Set<Socket>();
  const server = createServer((request, response) => {
    answering.add(request.socket);
    response.once('close', () => answering.delete(request.socket));
    const path = pathOf(request.url);
    const reply =
      path === undefined
        ? Promise.resolve(json(400, { error: 'Bad Request', message: 'request target is not a URL path' }))
        : request.method === 'GET' || request.method === 'HEAD'
          ? answer(path, options)
          : Promise.resolve(json(405, { error: 'Method Not Allowed' }));
    reply
      .catch((error: unknown) =>
        json(500, {
          error: 'Internal Server Error',
          message: secretsOf(options).redact((error as Error).message),
        }),
      )
      .then(({ status, contentType, body }) => {
        response.writeHead(status, {
          'content-type': contentType,
          'content-length': Buffer.byteLength(body),
          ...(status === 405 ? { allow: 'GET, HEAD' } : {}),
          // Answered after close() (no longer listening): the connection ends with it, or the
          // client's next request on it is answered too, and so on for as long as it keeps asking.
          ...(server.listening ? {} : { connection: 'close' }),
        });
        response.end(request.method === 'HEAD' ? undefined : body);
      });
  });
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    const refuse = (error: NodeJS.ErrnoException) => {
      const { host, port } = options;
      reject(
        new ObservabilityError(
          'METRICS_LISTEN_FAILED',
          `the operations endpoint cannot listen on ${host}:${port}: ${error.message}`,
          { cause: error, details: { host, port, ...(error.code ? { systemCode: error.code } : {}) } },
        ),
      );
    };
    server.once('error', refuse);
    server.listen({ host: options.host, port: options.port }, () => {
      server.off('error', refuse);
      resolve();
    });
  });
  const { address, family, port } = server.address() as AddressInfo;
  const host = family === 'IPv6' ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Every connection holds close() open until it ends. A request being answered is let
        // finish, and its connection ends with it; any other is cut: a kept-alive one of a
        // scraper or probe would wait for its timeout, and one that has sent no request, or
        // part of one (a TCP probe, a port scan, a client cut off), for good.
        for (const socket of connections) if (!answering.has(socket)) socket.destroy();
      }),
  };
}
