import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { RefDataClient } from '../../src/refdata/index.ts';
import { SECRETS, basicOf, clientFor, rejectionOf } from './support/client-fixtures.ts';
import { TOKEN_PATH, startTestServer, type TestServer } from './support/refdata-test-server.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const ACCESS_TOKEN = 'access-token-5c9e2a7f1d';
/** What every test client holds; clients built with 'apiKey' hold the API key too. */
const HELD_SECRETS = [
  SECRETS.clientSecret,
  SECRETS.basicPassword,
  basicOf(SECRETS.clientId, SECRETS.clientSecret).slice('Basic '.length),
  basicOf(SECRETS.basicUsername, SECRETS.basicPassword).slice('Basic '.length),
];
const ALL_SECRETS = [...HELD_SECRETS, SECRETS.apiKey, ACCESS_TOKEN];

/** Every way an error reaches a log: message, stack, JSON, util.inspect (cause included). */
function expectNoSecretIn(error: Error): void {
  const renderings = [
    error.message,
    String(error.stack),
    JSON.stringify(error),
    inspect(error, { depth: 8 }),
  ];
  for (const rendering of renderings) {
    for (const secret of ALL_SECRETS) expect(rendering).not.toContain(secret);
  }
}

/** A server that echoes the given credentials back in its error body. */
const echoing = (status: number, secrets: readonly string[]) => () => ({
  status,
  body: { code: 'ECHO', message: `refused ${secrets.join(' ')}`, field: secrets[0] },
});

describe('secrets in errors', () => {
  it('redacts an API key and client secret a server echoes in its error body', async () => {
    server = await startTestServer(echoing(400, [SECRETS.apiKey, ...HELD_SECRETS]));
    const error = await rejectionOf(clientFor(server.url, 'apiKey').getBulkLookup({ path: { id: 'b' } }));
    expect(error).toMatchObject({ code: 'REFDATA_BAD_REQUEST' });
    expect(error.message).toContain('[REDACTED]');
    expectNoSecretIn(error);
  });

  it('redacts an access token the client received once a server echoes it', async () => {
    server = await startTestServer((request) =>
      request.path === TOKEN_PATH
        ? { body: { access_token: ACCESS_TOKEN, expires_in: 300 } }
        : { status: 500, body: { code: 'BOOM', message: `bad bearer ${ACCESS_TOKEN}` } },
    );
    const error = await rejectionOf(clientFor(server.url, 'oauth').createBulkLookup({ body: { tasks: [] } }));
    expect(error).toMatchObject({ code: 'REFDATA_SERVER_ERROR', status: 500 });
    expectNoSecretIn(error);
  });

  it('keeps credentials out of a failed token request', async () => {
    server = await startTestServer(echoing(401, HELD_SECRETS));
    const error = await rejectionOf(clientFor(server.url, 'oauth').getExtdLookupJob({ path: { id: 'j' } }));
    expect(error).toMatchObject({ code: 'REFDATA_AUTH_FAILED', status: 401, operation: 'requestToken' });
    expectNoSecretIn(error);
  });

  it('keeps basic-auth credentials out of a network error', async () => {
    server = await startTestServer(() => 'reset');
    const error = await rejectionOf(
      clientFor(server.url, 'apiKey').getEventStoreInitializerJob({ path: { jobId: 'j' } }),
    );
    expect(error).toMatchObject({ code: 'REFDATA_NETWORK_ERROR' });
    expectNoSecretIn(error);
  });

  it('keeps a request password out of a validation error', async () => {
    server = await startTestServer(() => ({ body: {} }));
    const error = await rejectionOf(
      clientFor(server.url, 'apiKey').createExtdLookupJob({
        body: { storageId: 's', extdPassword: SECRETS.basicPassword, mode: 'FAST' as 'MATCH' },
      }),
    );
    expect(error).toMatchObject({ code: 'REFDATA_INVALID_REQUEST' });
    expectNoSecretIn(error);
  });

  it('keeps secrets out of an options error', () => {
    let thrown: unknown;
    try {
      new RefDataClient({
        roots: { base: 'not a url' },
        credentials: {
          apiKey: SECRETS.apiKey,
          clientCredentials: { clientId: 'id', clientSecret: SECRETS.clientSecret },
        },
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'REFDATA_INVALID_OPTIONS' });
    expectNoSecretIn(thrown as Error);
  });
});
