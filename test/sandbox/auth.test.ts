import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RefDataClient, RefDataHttpError } from '../../src/refdata/index.ts';
import {
  CREDENTIALS,
  TOKEN_PATH,
  basic,
  startTestSandbox,
  type TestSandbox,
} from './support/sandbox-fixtures.ts';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ tokenLifetimeSeconds: 60 });
});
afterAll(() => sandbox.close());

const FORM = 'application/x-www-form-urlencoded';
const tokenRequest = (authorization: string | undefined, body = 'grant_type=client_credentials') =>
  fetch(`${sandbox.url}${TOKEN_PATH}`, {
    method: 'POST',
    headers: { 'content-type': FORM, ...(authorization ? { authorization } : {}) },
    body,
  });

describe('sandbox token endpoint', () => {
  it('issues a bearer token for basic client credentials and a client_credentials form', async () => {
    const response = await tokenRequest(basic(CREDENTIALS.clientId, CREDENTIALS.clientSecret));
    expect(response.status).toBe(200);
    const token = (await response.json()) as Record<string, unknown>;
    expect(token).toMatchObject({ token_type: 'Bearer', expires_in: 60 });
    expect(typeof token.access_token).toBe('string');
  });

  it('answers 401 for a wrong client secret and for no credentials', async () => {
    expect((await tokenRequest(basic(CREDENTIALS.clientId, 'wrong'))).status).toBe(401);
    expect((await tokenRequest(undefined)).status).toBe(401);
  });

  it('answers 400 naming grant_type for another grant', async () => {
    const response = await tokenRequest(
      basic(CREDENTIALS.clientId, CREDENTIALS.clientSecret),
      'grant_type=password',
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'INVALID_REQUEST', field: 'body.grant_type' });
  });

  it('counts token requests, refused ones included', async () => {
    const before = (await sandbox.stats()).tokenRequests as number;
    await tokenRequest(undefined);
    await sandbox.client.requestToken();
    expect((await sandbox.stats()).tokenRequests).toBe(before + 2);
  });
});

describe('sandbox authentication of the reference data root', () => {
  const path = '/extd/lookupjobs/unknown-job';

  it('accepts the API key', async () => {
    expect((await sandbox.raw('GET', path)).status).toBe(404);
  });

  it('answers 401 without credentials and 403 for a wrong API key', async () => {
    const missing = await sandbox.raw('GET', path, { anonymous: true });
    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe('UNAUTHORIZED');
    const wrong = await sandbox.raw('GET', path, { anonymous: true, headers: { 'x-api-key': 'wrong' } });
    expect(wrong.status).toBe(403);
    expect(wrong.body.code).toBe('FORBIDDEN');
  });

  it('accepts a bearer token from the token endpoint and refuses a made-up one with 403', async () => {
    const { access_token } = await sandbox.client.requestToken();
    const valid = await sandbox.raw('GET', path, {
      anonymous: true,
      headers: { authorization: `Bearer ${access_token}` },
    });
    expect(valid.status).toBe(404);
    const wrong = await sandbox.raw('GET', path, {
      anonymous: true,
      headers: { authorization: 'Bearer made-up' },
    });
    expect(wrong.status).toBe(403);
  });

  it('refuses a token with 403 once its lifetime has passed on the sandbox clock', async () => {
    const { access_token } = await sandbox.client.requestToken();
    const headers = { authorization: `Bearer ${access_token}` };
    sandbox.clock.advance(59_999);
    expect((await sandbox.raw('GET', path, { anonymous: true, headers })).status).toBe(404);
    sandbox.clock.advance(1);
    expect((await sandbox.raw('GET', path, { anonymous: true, headers })).status).toBe(403);
  });

  it('serves the OAuth client end to end: one token for many calls', async () => {
    const before = (await sandbox.stats()).tokenRequests as number;
    const client = sandbox.oauthClient();
    const configurations = await Promise.all([1, 2, 3].map(() => client.listLookupConfigurations()));
    expect(configurations.every((page) => (page.total ?? 0) > 0)).toBe(true);
    expect((await sandbox.stats()).tokenRequests).toBe(before + 1);
  });
});

describe('sandbox authentication of the data exchange, identity and usage roots', () => {
  const jobs = '/public/jobs/eventStoreInitializerJobs/unknown';

  it('requires basic credentials and X-Credential-Username on the data exchange root', async () => {
    const username = { 'x-credential-username': CREDENTIALS.username };
    expect((await sandbox.raw('GET', jobs, { anonymous: true, headers: username })).status).toBe(401);
    const wrong = { ...username, authorization: basic(CREDENTIALS.exchangeUser, 'wrong') };
    expect((await sandbox.raw('GET', jobs, { anonymous: true, headers: wrong })).status).toBe(403);
    const noUser = { authorization: basic(CREDENTIALS.exchangeUser, CREDENTIALS.exchangePassword) };
    const missing = await sandbox.raw('GET', jobs, { anonymous: true, headers: noUser });
    expect(missing.status).toBe(400);
    expect(missing.body.field).toBe('header.x-credential-username');
    expect((await sandbox.raw('GET', jobs)).status).toBe(404);
  });

  it('requires a bearer token on the identity root, not the API key', async () => {
    const headers = { 'x-api-key': CREDENTIALS.apiKey, 'x-credential-username': CREDENTIALS.username };
    expect((await sandbox.raw('GET', '/quotas/ratelimits', { anonymous: true, headers })).status).toBe(401);
    const wrong = { authorization: 'Bearer made-up', 'x-credential-username': CREDENTIALS.username };
    expect((await sandbox.raw('GET', '/quotas/ratelimits', { anonymous: true, headers: wrong })).status).toBe(
      403,
    );
    expect((await sandbox.raw('GET', '/quotas/ratelimits')).status).toBe(200);
  });

  it('requires X-Credential-Username on the usage root', async () => {
    const body = { service: { technicalKey: 'EXTD' } };
    const missing = await sandbox.raw('POST', '/quotas/consume', { anonymous: true, body });
    expect(missing.status).toBe(400);
    expect(missing.body.field).toBe('header.x-credential-username');
    expect((await sandbox.raw('POST', '/quotas/consume', { body })).status).toBe(200);
  });

  it('surfaces a refused API key to the client as REFDATA_AUTH_FAILED', async () => {
    const client = new RefDataClient({ roots: { base: sandbox.url }, credentials: { apiKey: 'wrong' } });
    const error = await client.listFetchConfigurations().catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RefDataHttpError);
    expect((error as RefDataHttpError).code).toBe('REFDATA_AUTH_FAILED');
    expect((error as RefDataHttpError).status).toBe(403);
  });
});
