// Clients wired to a test server, with made-up secrets that tests then hunt for in errors.

import { RefDataClient, type RefDataClientOptions } from '../../../src/refdata/index.ts';
import { manualClock } from './refdata-test-server.ts';

export const SECRETS = {
  apiKey: 'api-key-7f3a9c1e5b',
  clientId: 'pipeline-client',
  clientSecret: 'client-secret-4d2e8b6a0c',
  basicUsername: 'exchange-user',
  basicPassword: 'basic-password-9e1f7d3b',
  credentialUsername: 'etl-robot@example.invalid',
} as const;

export const basicOf = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

export type Clock = ReturnType<typeof manualClock>;

/** Every root points at the one test server: the five APIs have no colliding paths. */
export function clientFor(
  url: string,
  auth: 'apiKey' | 'oauth',
  overrides: Partial<RefDataClientOptions> = {},
  clock: Clock = manualClock(),
): RefDataClient {
  return new RefDataClient({
    roots: { base: url, auth: url, dataExchange: url, identity: url, usage: url },
    credentials: {
      ...(auth === 'apiKey' ? { apiKey: SECRETS.apiKey } : {}),
      clientCredentials: { clientId: SECRETS.clientId, clientSecret: SECRETS.clientSecret },
      dataExchangeBasicAuth: { username: SECRETS.basicUsername, password: SECRETS.basicPassword },
      credentialUsername: SECRETS.credentialUsername,
    },
    retry: { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1_000 },
    now: clock.now,
    sleep: clock.sleep,
    random: () => 0.5,
    ...overrides,
  });
}

/** Asserts the promise rejects and hands back the error for closer assertions. */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error;
    throw new Error(`rejected with a non-error: ${String(error)}`, { cause: error });
  }
  throw new Error('expected a rejection, but the promise resolved');
}
