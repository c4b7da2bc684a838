// The quota gate's check through the usage API, against the sandbox over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RefDataHttpError } from '../../src/refdata/index.ts';
import { usageQuotaCheck } from '../../src/quota/usage-quota-check.ts';
import { clientFor, rejectionOf } from '../refdata/support/client-fixtures.ts';
import { startTestServer, type Reply } from '../refdata/support/refdata-test-server.ts';
import { startTestSandbox, type TestSandbox } from '../sandbox/support/sandbox-fixtures.ts';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(() => sandbox.close());

const MINUTE = 60_000;

describe('usageQuotaCheck', () => {
  it("consumes from the organization's quota and reads the window's size, what is left and its length", async () => {
    sandbox.clock.advance(MINUTE - (sandbox.clock.now() % MINUTE));
    await sandbox.client.upsertRateLimitQuotas({
      body: { quotas: [{ service: { technicalKey: 'GATED' }, maxAmount: 10, reset: 'PT1M' }] },
    });
    const check = usageQuotaCheck(sandbox.client, {
      serviceTechnicalKey: 'GATED',
      organizationId: 'default-org',
    });
    expect(await check.consume(7)).toBe('OK');
    expect(await check.consume(4)).toBe('OVER_LIMIT');
    expect(await check.room()).toEqual({ max: 10, left: 3, windowMs: MINUTE });
  });

  it('tells no room where the organization has no quota for the service', async () => {
    const check = usageQuotaCheck(sandbox.client, {
      serviceTechnicalKey: 'UNLIMITED',
      organizationId: 'default-org',
    });
    expect(await check.consume(1_000)).toBe('OK');
    expect(await check.room()).toBeUndefined();
  });

  // The spec (service usage API, item 27) answers `status` OK or OVER_LIMIT; a service that
  // answers neither has not said the units were granted.
  it.each<[string, Reply]>([
    ['no status', { body: {} }],
    ['an unknown status', { body: { status: 'DENIED' } }],
    ['an empty body', { raw: '' }],
  ])(
    'regression: a consume answered with %s was taken as granted (or failed with a TypeError)',
    async (_what, reply) => {
      const server = await startTestServer(() => reply);
      try {
        const check = usageQuotaCheck(clientFor(server.url, 'apiKey'), {
          serviceTechnicalKey: 'GATED',
          organizationId: 'default-org',
        });
        const error = await rejectionOf(check.consume(5));
        expect(error).toBeInstanceOf(RefDataHttpError);
        expect(error).toMatchObject({
          code: 'REFDATA_INVALID_RESPONSE',
          operation: 'consumeQuota',
          status: 200,
          canRetry: false,
        });
        expect(server.requestsTo('/quotas/consume')).toHaveLength(1);
      } finally {
        await server.close();
      }
    },
  );
});
