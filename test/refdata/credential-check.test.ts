// RefDataClient.authenticate against the real sandbox over HTTP: the start of `run` and `demo`
// tries the credentials with it before any record is read.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RefDataClient } from '../../src/refdata/index.ts';
import { rejectionOf } from './support/client-fixtures.ts';
import { CREDENTIALS, startTestSandbox, type TestSandbox } from '../sandbox/support/sandbox-fixtures.ts';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  await sandbox.raw('POST', '/admin/reset');
});

const withApiKey = (apiKey: string) =>
  new RefDataClient({ roots: { base: sandbox.url }, credentials: { apiKey }, retry: { maxAttempts: 1 } });

describe('the credentials tried before any work (RefDataClient.authenticate)', () => {
  it('accepts the API key the service knows, with one read and nothing submitted or consumed', async () => {
    await withApiKey(CREDENTIALS.apiKey).authenticate();
    const stats = await sandbox.stats();
    expect(stats.requestsByOperation).toEqual({ getBulkLookup: 1 });
    expect(stats).toMatchObject({ bulkSubmissions: 0, quotaConsumed: 0, quotaConsumeRequests: 0 });
  });

  it('regression: an API key the service refuses was only found at the first lookup; it fails with REFDATA_AUTH_FAILED, the key in no message', async () => {
    const revokedKey = 'revoked-api-key-93af';
    const error = await rejectionOf(withApiKey(revokedKey).authenticate());
    expect(error).toMatchObject({ code: 'REFDATA_AUTH_FAILED', status: 403 });
    expect(String((error as Error).message)).not.toContain(revokedKey);
    expect(JSON.stringify(error)).not.toContain(revokedKey);
  });

  it('refuses a token the issuer grants when the reference data API refuses it', async () => {
    await sandbox.raw('PUT', '/admin/faults', { body: { credentialsRevoked: true } });
    const error = await rejectionOf(sandbox.oauthClient().authenticate());
    expect(error).toMatchObject({ code: 'REFDATA_AUTH_FAILED', status: 403, operation: 'getBulkLookup' });
  });
});
