// The quota gate's check through the usage API, against the sandbox over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usageQuotaCheck } from '../../src/quota/usage-quota-check.ts';
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
});
