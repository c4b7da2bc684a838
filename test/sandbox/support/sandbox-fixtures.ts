// A sandbox on port 0 with a clock the tests move by hand, typed clients wired to it, and raw
// requests that bypass the client's own validation (to prove the server's).

import { RefDataClient, type RefDataClientOptions } from '../../../src/refdata/index.ts';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../../src/sandbox/index.ts';

/** Small enough to build in a fraction of a second, large enough for every data source. */
export const TEST_ORGS = 1_500;

export const CREDENTIALS = {
  apiKey: 'test-api-key',
  clientId: 'test-client',
  clientSecret: 'test-client-secret',
  exchangeUser: 'exchange-user',
  exchangePassword: 'exchange-password',
  username: 'etl-robot@example.invalid',
  administrator: 'quota-admin',
} as const;

export const TOKEN_PATH = '/auth/realms/cs/protocol/openid-connect/token';

export interface ManualClock {
  now(): number;
  advance(ms: number): void;
}

export function manualClock(start = Date.parse('2025-01-01T00:00:00Z')): ManualClock {
  let now = start;
  return {
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
  };
}

export interface TestSandbox extends RunningSandbox {
  clock: ManualClock;
  /** A client authenticating with the API key (bearer tokens on the identity root). */
  client: RefDataClient;
  /** A client authenticating with OAuth client credentials everywhere. */
  oauthClient(overrides?: Partial<RefDataClientOptions>): RefDataClient;
  raw(method: string, path: string, init?: RawInit): Promise<RawResponse>;
  stats(): Promise<Record<string, unknown> & { requestsByOperation: Record<string, number> }>;
}

export interface RawInit {
  body?: unknown;
  headers?: Record<string, string>;
  /** Leave out the credentials the path's root needs. */
  anonymous?: boolean;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { code?: string; field?: string; limit?: number | string };
}

export const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

export async function startTestSandbox(options: SandboxOptions = {}): Promise<TestSandbox> {
  const clock = manualClock();
  const sandbox = await startSandbox({
    orgs: TEST_ORGS,
    seed: 7,
    apiKey: CREDENTIALS.apiKey,
    clientId: CREDENTIALS.clientId,
    clientSecret: CREDENTIALS.clientSecret,
    dataExchange: { username: CREDENTIALS.exchangeUser, password: CREDENTIALS.exchangePassword },
    administrators: [CREDENTIALS.administrator],
    clock,
    ...options,
  });
  const clientOptions = (auth: 'apiKey' | 'oauth'): RefDataClientOptions => ({
    roots: {
      base: sandbox.url,
      auth: sandbox.url,
      dataExchange: sandbox.url,
      identity: sandbox.url,
      usage: sandbox.url,
    },
    credentials: {
      ...(auth === 'apiKey' ? { apiKey: CREDENTIALS.apiKey } : {}),
      clientCredentials: { clientId: CREDENTIALS.clientId, clientSecret: CREDENTIALS.clientSecret },
      dataExchangeBasicAuth: { username: CREDENTIALS.exchangeUser, password: CREDENTIALS.exchangePassword },
      credentialUsername: CREDENTIALS.username,
    },
    retry: { maxAttempts: 1 },
    now: clock.now,
  });

  let bearer: string | undefined;
  const credentialsFor = async (path: string): Promise<Record<string, string>> => {
    if (path.startsWith('/auth/'))
      return { authorization: basic(CREDENTIALS.clientId, CREDENTIALS.clientSecret) };
    if (path.startsWith('/public/')) {
      return {
        authorization: basic(CREDENTIALS.exchangeUser, CREDENTIALS.exchangePassword),
        'x-credential-username': CREDENTIALS.username,
      };
    }
    if (path.startsWith('/quotas/ratelimits')) {
      bearer ??= await issueToken(sandbox.url);
      return { authorization: `Bearer ${bearer}`, 'x-credential-username': CREDENTIALS.username };
    }
    if (path.startsWith('/quotas/')) return { 'x-credential-username': CREDENTIALS.username };
    return { 'x-api-key': CREDENTIALS.apiKey };
  };

  const raw = async (method: string, path: string, init: RawInit = {}): Promise<RawResponse> => {
    const headers: Record<string, string> = {
      ...(init.anonymous ? {} : await credentialsFor(path)),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...init.headers,
    };
    const response = await fetch(`${sandbox.url}${path}`, {
      method,
      headers,
      ...(init.body === undefined
        ? {}
        : { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text === '' ? {} : JSON.parse(text) };
  };

  return {
    ...sandbox,
    clock,
    client: new RefDataClient(clientOptions('apiKey')),
    oauthClient: (overrides = {}) => new RefDataClient({ ...clientOptions('oauth'), ...overrides }),
    raw,
    stats: async () => (await raw('GET', '/admin/stats')).body as Awaited<ReturnType<TestSandbox['stats']>>,
  };
}

async function issueToken(url: string): Promise<string> {
  const response = await fetch(`${url}${TOKEN_PATH}`, {
    method: 'POST',
    headers: {
      authorization: basic(CREDENTIALS.clientId, CREDENTIALS.clientSecret),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  const body = (await response.json()) as { access_token: string };
  return body.access_token;
}

/** Polls `read` until `done` holds; the sandbox's bulks run on the event loop, not the clock. */
export async function until<Value>(
  read: () => Promise<Value>,
  done: (value: Value) => boolean,
): Promise<Value> {
  for (let attempt = 0; attempt < 2_000; attempt++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('condition not reached after 2000 polls');
}
