import { afterEach, describe, expect, it } from 'vitest';
import { RefDataHttpError } from '../../src/refdata/index.ts';
import { eventually } from '../support/kafka.ts';
import { SECRETS, basicOf, clientFor, rejectionOf } from './support/client-fixtures.ts';
import {
  TOKEN_PATH,
  manualClock,
  startTestServer,
  type Handler,
  type TestServer,
} from './support/refdata-test-server.ts';

const JOB_PATH = '/extd/lookupjobs/job-1';
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Issues token-1, token-2, ... with the given lifetime; other paths go to `api`. */
function tokenIssuer(expiresIn: number, api: Handler): Handler {
  let issued = 0;
  return (request) => {
    if (request.path !== TOKEN_PATH) return api(request);
    issued += 1;
    return { body: { access_token: `token-${issued}`, expires_in: expiresIn, token_type: 'Bearer' } };
  };
}

const job = { id: 'job-1', status: 'RUNNING', progress: 10 };

describe('authentication of the reference data client', () => {
  it('sends the API key as X-API-KEY and never asks for a token when one is configured', async () => {
    server = await startTestServer(() => ({ body: job }));
    await clientFor(server.url, 'apiKey').getExtdLookupJob({ path: { id: 'job-1' } });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.headers['x-api-key']).toBe(SECRETS.apiKey);
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('asks the token endpoint with basic client credentials and a client_credentials form', async () => {
    server = await startTestServer(tokenIssuer(300, () => ({ body: job })));
    await clientFor(server.url, 'oauth').getExtdLookupJob({ path: { id: 'job-1' } });
    const [tokenRequest] = server.requestsTo(TOKEN_PATH);
    expect(tokenRequest?.method).toBe('POST');
    expect(tokenRequest?.headers.authorization).toBe(basicOf(SECRETS.clientId, SECRETS.clientSecret));
    expect(tokenRequest?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(tokenRequest?.body).toBe('grant_type=client_credentials');
    expect(server.requestsTo(JOB_PATH)[0]?.headers.authorization).toBe('Bearer token-1');
  });

  it('makes exactly one token request for 50 concurrent calls', async () => {
    server = await startTestServer(tokenIssuer(300, () => ({ body: job })));
    const client = clientFor(server.url, 'oauth');
    await Promise.all(Array.from({ length: 50 }, () => client.getExtdLookupJob({ path: { id: 'job-1' } })));
    expect(server.requestsTo(TOKEN_PATH)).toHaveLength(1);
    expect(server.requestsTo(JOB_PATH)).toHaveLength(50);
    expect(new Set(server.requestsTo(JOB_PATH).map((request) => request.headers.authorization))).toEqual(
      new Set(['Bearer token-1']),
    );
  });

  it('reuses the token until the refresh margin before expires_in, then refreshes it (the token in hand serving the call that finds it due)', async () => {
    server = await startTestServer(tokenIssuer(60, () => ({ body: job })));
    const clock = manualClock();
    const client = clientFor(server.url, 'oauth', { tokenRefreshMarginMs: 10_000 }, clock);
    await client.getExtdLookupJob({ path: { id: 'job-1' } });
    clock.advance(49_000);
    await client.getExtdLookupJob({ path: { id: 'job-1' } });
    expect(server.requestsTo(TOKEN_PATH)).toHaveLength(1);
    clock.advance(2_000); // 51 s: inside the last 10 s of a 60 s token
    await client.getExtdLookupJob({ path: { id: 'job-1' } });
    await eventually(() => server?.requestsTo(TOKEN_PATH).length === 2);
    await client.getExtdLookupJob({ path: { id: 'job-1' } });
    expect(server.requestsTo(JOB_PATH).map((request) => request.headers.authorization)).toEqual([
      'Bearer token-1',
      'Bearer token-1',
      'Bearer token-1',
      'Bearer token-2',
    ]);
  });

  it('waits for the new token once the one in hand has a third of the margin left or less', async () => {
    server = await startTestServer(tokenIssuer(60, () => ({ body: job })));
    const clock = manualClock();
    const client = clientFor(server.url, 'oauth', { tokenRefreshMarginMs: 30_000 }, clock);
    await client.getExtdLookupJob({ path: { id: 'job-1' } });
    clock.advance(50_000); // 10 s left
    await client.getExtdLookupJob({ path: { id: 'job-1' } });
    expect(server.requestsTo(JOB_PATH).map((request) => request.headers.authorization)).toEqual([
      'Bearer token-1',
      'Bearer token-2',
    ]);
  });

  it('regression: a token endpoint failing when the token was due failed the request though the token in hand was good for 30 s more (lookups retried, dead letters at the end); now the request goes with that token, and the next is asked for again after a backoff', async () => {
    let away = false;
    const issuer = tokenIssuer(60, () => ({ body: job }));
    server = await startTestServer((request) =>
      request.path === TOKEN_PATH && away
        ? { status: 503, body: { code: 'UNAVAILABLE', message: 'token endpoint away' } }
        : issuer(request),
    );
    const tokenRequests = () => server?.requestsTo(TOKEN_PATH).length ?? 0;
    const clock = manualClock();
    const client = clientFor(server.url, 'oauth', { tokenRefreshMarginMs: 30_000 }, clock);
    const call = () => client.getExtdLookupJob({ path: { id: 'job-1' } });
    await call();
    clock.advance(31_000); // due, 29 s left
    away = true;
    await expect(call()).resolves.toEqual(job);
    await eventually(() => tokenRequests() === 1 + 4); // the refresh's four attempts, all refused
    away = false;
    clock.advance(15_000); // past the backoff, 14 s left: this call asks for the next token
    await call();
    await eventually(() => tokenRequests() === 6);
    await call();
    expect(server.requestsTo(JOB_PATH).map((request) => request.headers.authorization)).toEqual([
      'Bearer token-1',
      'Bearer token-1',
      'Bearer token-1',
      'Bearer token-2',
    ]);
  });

  it('regression: a refresh that failed while the token in hand served was told to nobody (no call failed for it); now onTokenRefreshFailed hears of each, with no secret in it', async () => {
    const issuer = tokenIssuer(60, () => ({ body: job }));
    let away = false;
    server = await startTestServer((request) =>
      request.path === TOKEN_PATH && away
        ? { status: 503, body: { code: 'UNAVAILABLE', message: 'token endpoint away' } }
        : issuer(request),
    );
    const told: Error[] = [];
    const clock = manualClock();
    const client = clientFor(
      server.url,
      'oauth',
      { tokenRefreshMarginMs: 30_000, onTokenRefreshFailed: (error) => told.push(error as Error) },
      clock,
    );
    const call = () => client.getExtdLookupJob({ path: { id: 'job-1' } });
    await call();
    clock.advance(31_000); // due, 29 s left
    away = true;
    await call();
    await eventually(() => told.length === 1);
    await call(); // inside the backoff: not asked again
    clock.advance(5_000);
    await call();
    await eventually(() => told.length === 2);
    expect(server.requestsTo(TOKEN_PATH)).toHaveLength(1 + 4 + 4);
    expect(told.map((error) => error.message).join('\n')).toMatch(/503/);
    for (const secret of [SECRETS.clientSecret, 'token-1']) {
      expect(told.map((error) => `${error.message} ${JSON.stringify(error)}`).join('\n')).not.toContain(
        secret,
      );
    }
  });

  it('refreshes the token exactly once on a 403 and repeats the request with the new token', async () => {
    server = await startTestServer(
      tokenIssuer(300, (request) =>
        request.headers.authorization === 'Bearer token-1'
          ? { status: 403, body: { code: 'INVALID_TOKEN', message: 'wrong token' } }
          : { body: job },
      ),
    );
    const result = await clientFor(server.url, 'oauth').getExtdLookupJob({ path: { id: 'job-1' } });
    expect(result).toEqual(job);
    expect(server.requestsTo(TOKEN_PATH)).toHaveLength(2);
    expect(server.requestsTo(JOB_PATH).map((request) => request.headers.authorization)).toEqual([
      'Bearer token-1',
      'Bearer token-2',
    ]);
  });

  it('fails with REFDATA_AUTH_FAILED when the fresh token is refused too, after one refresh only', async () => {
    server = await startTestServer(
      tokenIssuer(300, () => ({ status: 403, body: { code: 'FORBIDDEN', message: 'no' } })),
    );
    const error = await rejectionOf(
      clientFor(server.url, 'oauth').getExtdLookupJob({ path: { id: 'job-1' } }),
    );
    expect(error).toBeInstanceOf(RefDataHttpError);
    expect(error).toMatchObject({ code: 'REFDATA_AUTH_FAILED', status: 403, operation: 'getExtdLookupJob' });
    expect(server.requestsTo(TOKEN_PATH)).toHaveLength(2);
    expect(server.requestsTo(JOB_PATH)).toHaveLength(2);
  });

  it('does not retry a 403 for an API key, since no refresh can change the key', async () => {
    server = await startTestServer(() => ({ status: 403, body: { code: 'FORBIDDEN', message: 'no' } }));
    const error = await rejectionOf(
      clientFor(server.url, 'apiKey').getExtdLookupJob({ path: { id: 'job-1' } }),
    );
    expect(error).toMatchObject({ code: 'REFDATA_AUTH_FAILED', canRetry: false });
    expect(server.requests).toHaveLength(1);
  });

  it('uses basic auth plus X-Credential-Username for the data exchange API', async () => {
    server = await startTestServer(() => ({ body: { id: 'esi-1', status: 'CREATED' } }));
    await clientFor(server.url, 'apiKey').createEventStoreInitializerJob({
      body: { storageId: 'storage-1' },
    });
    const [request] = server.requests;
    expect(request?.path).toBe('/public/jobs/eventStoreInitializerJobs');
    expect(request?.headers.authorization).toBe(basicOf(SECRETS.basicUsername, SECRETS.basicPassword));
    expect(request?.headers['x-credential-username']).toBe(SECRETS.credentialUsername);
    expect(request?.headers['x-api-key']).toBeUndefined();
  });

  it('uses a bearer token plus X-Credential-Username for the identity API, even with an API key', async () => {
    server = await startTestServer(tokenIssuer(300, () => ({ body: { numberOfUpserted: 1 } })));
    await clientFor(server.url, 'apiKey').upsertRateLimitQuotas({
      body: {
        quotas: [{ service: { technicalKey: 'EXTD' }, organization: { id: 'org-1' }, maxAmount: 100 }],
      },
    });
    const [request] = server.requestsTo('/quotas/ratelimits');
    expect(request?.method).toBe('PUT');
    expect(request?.headers.authorization).toBe('Bearer token-1');
    expect(request?.headers['x-credential-username']).toBe(SECRETS.credentialUsername);
  });

  it('sends only X-Credential-Username to the service usage API', async () => {
    server = await startTestServer(() => ({ body: { status: 'OK' } }));
    const result = await clientFor(server.url, 'apiKey').consumeQuota({
      body: { service: { technicalKey: 'EXTD' } },
    });
    expect(result).toEqual({ status: 'OK' });
    const [request] = server.requests;
    expect(request?.headers['x-credential-username']).toBe(SECRETS.credentialUsername);
    expect(request?.headers.authorization).toBeUndefined();
    expect(request?.headers['x-api-key']).toBeUndefined();
  });
});
