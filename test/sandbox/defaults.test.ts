// Every documented default, observed in the answers to requests that leave the member out.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkTask, knownPartner, normalizedQuery } from './support/partners.ts';
import { startTestSandbox, type TestSandbox } from './support/sandbox-fixtures.ts';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(() => sandbox.close());

const query = () => normalizedQuery(knownPartner(sandbox.state, 11));

describe('sandbox defaults', () => {
  it('v4 lookup: limit 10, matchingThreshold 0.5 and maxCandidates 50', async () => {
    const implicit = await sandbox.raw('POST', '/v4/businesspartners/lookup', {
      body: { businessPartner: query() },
    });
    const explicit = await sandbox.client.lookupBusinessPartnersV4({
      body: { businessPartner: query(), limit: 10, matchingThreshold: 0.5, maxCandidates: 50 },
    });
    expect(implicit.status).toBe(200);
    expect(implicit.body.limit).toBe(10);
    expect(implicit.body).toEqual(explicit);
  });

  it('bulk lookup: limit 10, matchingThreshold 0.5 and maxCandidates 50, echoed by the bulk', async () => {
    const bulk = await sandbox.raw('POST', '/v4/businesspartners/lookup/bulks', {
      body: { tasks: [bulkTask('t1', knownPartner(sandbox.state, 11))] },
    });
    expect(bulk.body).toMatchObject({ limit: 10, matchingThreshold: 0.5, maxCandidates: 50 });
  });

  it('v3 POST lookup: pageSize 10, page 0, maxCandidates 10', async () => {
    const broad = {
      businessPartner: { addresses: [{ country: { shortName: 'DE' } }], names: [{ value: 'Logistik' }] },
    };
    const implicit = await sandbox.raw('POST', '/v3/businesspartners/lookup', {
      body: { ...broad, matchingThreshold: 0 },
    });
    expect(implicit.body).toMatchObject({ pageSize: 10, page: 0 });
    expect(implicit.body.total).toBeLessThanOrEqual(10);
    const wider = await sandbox.client.lookupBusinessPartnersV3({
      body: { ...broad, matchingThreshold: 0, maxCandidates: 200, pageSize: 1000 },
    });
    expect(wider.total).toBeGreaterThan(10);
  });

  it('v3 GET lookup: pageSize 10 and page 0', async () => {
    const partner = knownPartner(sandbox.state, 11);
    const page = await sandbox.client.lookupBusinessPartnersSimpleV3({
      query: { name: partner.name, country: partner.country },
    });
    expect(page).toMatchObject({ pageSize: 10, page: 0 });
    expect(page.values?.[0]?.svcId).toBeDefined();
  });

  it('event store initializer job: batchSize 500', async () => {
    const job = await sandbox.client.createEventStoreInitializerJob({ body: { storageId: 'storage-1' } });
    expect(job.batchSize).toBe(500);
  });

  it('EXTD lookup job results: limit 100, startAfter 0, extdDataSource EXTD', async () => {
    const job = await sandbox.client.createExtdLookupJob({ body: { storageId: 'storage-2' } });
    sandbox.clock.advance(24 * 60 * 60_000);
    const page = await sandbox.client.listExtdLookupJobResults({ path: { id: job.id ?? '' } });
    expect(page).toMatchObject({ limit: 100, startAfter: '0', nextStartAfter: '100' });
    expect(page.values).toHaveLength(100);
    expect(page.values?.[0]).toMatchObject({ extdDataSource: 'EXTD', mode: 'MATCH' });
  });

  it('quota consume: quotaAmount 1; quota read: FETCH_QUOTA_USAGE on', async () => {
    const service = { technicalKey: 'DEFAULTS-TEST' };
    await sandbox.client.upsertRateLimitQuotas({
      body: { quotas: [{ service, maxAmount: 10, reset: 'PT1H' }] },
    });
    await sandbox.client.consumeQuota({ body: { service } });
    const usage = await sandbox.client.getQuotaUsage({
      body: { values: [{ service, organization: { id: 'default-org' } }] },
    });
    expect(usage.values?.[0]?.usedQuota).toBe(1);
    const quotas = await sandbox.client.listRateLimitQuotas({
      query: { serviceTechnicalKeys: [service.technicalKey] },
    });
    expect(quotas.values?.[0]?.usedQuota).toBe(1);
    const withoutUsage = await sandbox.client.listRateLimitQuotas({
      query: { serviceTechnicalKeys: [service.technicalKey], featuresOff: ['FETCH_QUOTA_USAGE'] },
    });
    expect(withoutUsage.values?.[0]?.usedQuota).toBeUndefined();
  });
});
