// A real HTTP server on port 0 standing in for the reference data service. Each test gives it
// a handler; every request is recorded so tests can assert what reached the server.

import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** The body's text as sent, instead of `body` as JSON. */
  raw?: string;
}

/** `'hang'` never answers (time-out tests); `'reset'` destroys the socket (network error tests). */
export type Handler = (
  request: RecordedRequest,
) => Reply | 'hang' | 'reset' | Promise<Reply | 'hang' | 'reset'>;

export interface TestServer {
  url: string;
  requests: RecordedRequest[];
  requestsTo(path: string): RecordedRequest[];
  close(): Promise<void>;
}

export async function startTestServer(handler: Handler): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const url = new URL(incoming.url ?? '/', 'http://localhost');
      const recorded: RecordedRequest = {
        method: incoming.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      void Promise.resolve(handler(recorded)).then((reply) => {
        if (reply === 'hang') return;
        if (reply === 'reset') {
          incoming.socket.destroy();
          return;
        }
        const body = reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
        response.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        response.end(body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    requestsTo: (path) => requests.filter((request) => request.path === path),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

export const TOKEN_PATH = '/auth/realms/cs/protocol/openid-connect/token';

/** A clock the tests move by hand; `sleep` records the requested delay and moves the clock. */
export function manualClock(start = Date.parse('2025-01-01T00:00:00Z')) {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
  };
}
