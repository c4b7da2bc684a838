import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RefDataClient } from '../../src/refdata/index.ts';
import { CREDENTIALS, startTestSandbox, type TestSandbox } from './support/sandbox-fixtures.ts';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(() => sandbox.close());

const MINUTE = 60_000;
const ORG = 'default-org';

const upsert = (technicalKey: string, maxAmount: number, reset: string, workspace?: string) =>
  sandbox.client.upsertRateLimitQuotas({
    body: {
      quotas: [
        {
          service: { technicalKey },
          maxAmount,
          reset,
          ...(workspace ? { workspace: { id: workspace } } : {}),
        },
      ],
    },
  });
const consume = (technicalKey: string, quotaAmount?: number, workspaceId?: string) =>
  sandbox.client.consumeQuota({
    body: {
      service: { technicalKey },
      apiKeyCredentials: { organizationId: ORG, ...(workspaceId ? { workspaceId } : {}) },
      ...(quotaAmount === undefined ? {} : { quotaAmount }),
    },
  });

describe('sandbox quota consumption', () => {
  it('allows maxAmount per window, answers OVER_LIMIT without consuming, and resets at the window boundary', async () => {
    sandbox.clock.advance(MINUTE - (sandbox.clock.now() % MINUTE));
    await upsert('WINDOWED', 5, 'PT1M');
    expect((await consume('WINDOWED', 3)).status).toBe('OK');
    expect((await consume('WINDOWED', 3)).status).toBe('OVER_LIMIT');
    expect((await consume('WINDOWED', 2)).status).toBe('OK');
    expect((await consume('WINDOWED')).status).toBe('OVER_LIMIT');
    sandbox.clock.advance(MINUTE - 1);
    expect((await consume('WINDOWED')).status).toBe('OVER_LIMIT');
    sandbox.clock.advance(1);
    expect((await consume('WINDOWED', 5)).status).toBe('OK');
  });

  it('takes -1 (jobs) as a check that some quota is left, consuming nothing', async () => {
    await upsert('JOBS', 1, '3600');
    expect((await consume('JOBS', -1)).status).toBe('OK');
    expect((await consume('JOBS', 1)).status).toBe('OK');
    expect((await consume('JOBS', -1)).status).toBe('OVER_LIMIT');
  });

  it('applies the workspace quota before the organization quota, and no quota means no limit', async () => {
    await upsert('LAYERED', 100, 'P1D');
    await upsert('LAYERED', 1, 'P1D', 'ws-small');
    expect((await consume('LAYERED', 1, 'ws-small')).status).toBe('OK');
    expect((await consume('LAYERED', 1, 'ws-small')).status).toBe('OVER_LIMIT');
    expect((await consume('LAYERED', 50, 'ws-other')).status).toBe('OK');
    expect((await consume('UNLIMITED', 1_000_000)).status).toBe('OK');
  });

  it('answers OVER_LIMIT to every consume while the fault is on', async () => {
    await sandbox.raw('PUT', '/admin/faults', { body: { overLimit: true } });
    expect((await consume('UNLIMITED', 1)).status).toBe('OVER_LIMIT');
    await sandbox.raw('PUT', '/admin/faults', { body: { overLimit: false } });
    expect((await consume('UNLIMITED', 1)).status).toBe('OK');
  });

  it('counts consumed amounts, refusals and job units', async () => {
    await sandbox.raw('POST', '/admin/reset');
    await upsert('COUNTED', 10, 'P1D');
    await consume('COUNTED', 4);
    await consume('COUNTED', 7);
    await consume('COUNTED', -1);
    expect(await sandbox.stats()).toMatchObject({
      quotaConsumeRequests: 3,
      quotaConsumed: 4,
      quotaOverLimit: 1,
      quotaJobUnits: 1,
    });
  });

  it('audits every consume that consumed units, numbered and timed, for tests that reconcile payment (GET /admin/quota-audit)', async () => {
    await sandbox.raw('POST', '/admin/reset');
    await upsert('AUDITED', 10, 'P1D');
    const at = sandbox.clock.now();
    await consume('AUDITED', 4);
    sandbox.clock.advance(250);
    await consume('AUDITED', 7);
    await consume('AUDITED', -1);
    await consume('AUDITED', 6);
    const audit = async () => (await sandbox.raw('GET', '/admin/quota-audit')).body;
    // The refusal (7 > 6 left) and the job check (-1) consumed nothing.
    expect(await audit()).toEqual({
      consumes: [
        { n: 1, at, amount: 4 },
        { n: 2, at: at + 250, amount: 6 },
      ],
    });
    await sandbox.raw('POST', '/admin/reset');
    expect(await audit()).toEqual({ consumes: [] });
  });
  it('reports usage and status per requested item', async () => {
    await upsert('USAGE', 2, 'P1D');
    await consume('USAGE', 2);
    const usage = await sandbox.client.getQuotaUsage({
      body: { values: [{ service: { technicalKey: 'USAGE' }, organization: { id: ORG } }] },
    });
    expect(usage.values?.[0]).toMatchObject({ maxAmount: 2, usedQuota: 2, reset: 'P1D', status: 'WARNING' });
  });
});

describe('sandbox rate-limit quotas', () => {
  it('upserts (a second upsert replaces) and pages with page/pageSize/total', async () => {
    await sandbox.raw('POST', '/admin/reset');
    const upserted = await sandbox.client.upsertRateLimitQuotas({
      body: {
        quotas: ['A', 'B', 'C'].map((key) => ({
          service: { technicalKey: key },
          maxAmount: 10,
          reset: 'PT1H',
        })),
      },
    });
    expect(upserted.numberOfUpserted).toBe(3);
    await upsert('B', 20, 'PT1H');
    const first = await sandbox.client.listRateLimitQuotas({ query: { page: 0, pageSize: 2 } });
    expect(first).toMatchObject({ page: 0, pageSize: 2, total: 3 });
    const second = await sandbox.client.listRateLimitQuotas({ query: { page: 1, pageSize: 2 } });
    expect(
      [...(first.values ?? []), ...(second.values ?? [])].map((value) => [
        value.service?.technicalKey,
        value.maxAmount,
      ]),
    ).toEqual([
      ['A', 10],
      ['B', 20],
      ['C', 10],
    ]);
  });

  it('fills statuses, service details and workspace names with their features', async () => {
    await upsert('EXTD', 0, 'P1D');
    await upsert('EXTD', 5, 'P1D', 'ws-1');
    const page = await sandbox.client.listRateLimitQuotas({
      query: {
        serviceTechnicalKeys: ['EXTD'],
        featuresOn: [
          'DERIVE_STATUSES',
          'FETCH_SERVICE_DETAILS',
          'FETCH_WORKSPACE_QUOTAS',
          'FETCH_WORKSPACE_NAME',
        ],
        serviceName: 'provider',
      },
    });
    expect(page.values).toEqual([
      expect.objectContaining({
        service: expect.objectContaining({ name: 'External provider D' }),
        statuses: ['NOT_APPLICABLE'],
      }),
      expect.objectContaining({ workspace: { id: 'ws-1', name: 'Workspace ws-1' }, statuses: ['OK'] }),
    ]);
    const statusFilter = await sandbox.raw('GET', '/quotas/ratelimits?expectedStatuses=OK');
    expect(statusFilter.body).toMatchObject({ code: 'INVALID_REQUEST', field: 'query.expectedStatuses' });
  });

  it('refuses scope=system to a regular user with 400 and serves it to an administrator', async () => {
    const regular = await sandbox.raw('PUT', '/quotas/ratelimits?scope=system', { body: { quotas: [] } });
    expect(regular.status).toBe(400);
    expect(regular.body.field).toBe('query.scope');
    const admin = new RefDataClient({
      roots: { identity: sandbox.url, auth: sandbox.url },
      credentials: {
        clientCredentials: { clientId: CREDENTIALS.clientId, clientSecret: CREDENTIALS.clientSecret },
        credentialUsername: CREDENTIALS.administrator,
      },
      now: sandbox.clock.now,
    });
    const system = { quotas: [{ service: { technicalKey: 'SYS' }, maxAmount: 1000, reset: 'P1D' }] };
    expect(
      (await admin.upsertRateLimitQuotas({ query: { scope: 'system' }, body: system })).numberOfUpserted,
    ).toBe(1);
    const read = await admin.listRateLimitQuotas({ query: { scope: 'system' } });
    expect(read.values?.map((value) => value.service?.technicalKey)).toEqual(['SYS']);
  });

  it('refuses another organization with 403 and a reset it cannot read with 400', async () => {
    const other = await sandbox.raw('GET', '/quotas/ratelimits?organizationId=other-org');
    expect(other.status).toBe(403);
    const badReset = await sandbox.raw('PUT', '/quotas/ratelimits', {
      body: { quotas: [{ service: { technicalKey: 'X' }, maxAmount: 1, reset: 'P1M' }] },
    });
    expect(badReset.body).toMatchObject({ code: 'INVALID_REQUEST', field: 'body.quotas[0].reset' });
    const noAmount = await sandbox.raw('PUT', '/quotas/ratelimits', {
      body: { quotas: [{ service: { technicalKey: 'X' }, reset: 'PT1M' }] },
    });
    expect(noAmount.body).toMatchObject({ field: 'body.quotas[0].maxAmount' });
  });
});
