import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iterateBusinessPartnerRelations } from '../../src/refdata/index.ts';
import { knownPartner, normalizedQuery, partnerWithSource } from './support/partners.ts';
import { startTestSandbox, type TestSandbox } from './support/sandbox-fixtures.ts';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(() => sandbox.close());

/** An organization with at least `count` relations, by its first record. */
function partnerWithRelations(count: number): string {
  for (const organization of sandbox.state.dataset.organizations) {
    const svcId = organization.svcIds[0] ?? '';
    if ((sandbox.state.dataset.relationsOf(svcId)?.length ?? 0) >= count) return svcId;
  }
  throw new Error(`no organization with ${count} relations`);
}

describe('sandbox fetch', () => {
  it('v3: answers OK with the record, and INVALID_INPUT for an unknown or malformed svcId', async () => {
    const partner = knownPartner(sandbox.state, 5);
    const found = await sandbox.client.fetchBusinessPartnerV3({ body: { svcId: partner.svcId } });
    expect(found).toMatchObject({ status: 'OK', svcId: partner.svcId });
    expect(found.businessPartner?.names?.[0]).toEqual({ value: partner.name });
    expect(found.rawRecord).toBeUndefined();
    expect((await sandbox.client.fetchBusinessPartnerV3({ body: { svcId: 'OPENREG:NOPE' } })).status).toBe(
      'INVALID_INPUT',
    );
    expect((await sandbox.client.fetchBusinessPartnerV3({ body: { svcId: 'no-prefix' } })).status).toBe(
      'INVALID_INPUT',
    );
  });

  it('v3: adds debugInfo, rawRecord and rawRecordJson only with their features, mappedRecord with ERP mapping', async () => {
    const { svcId } = knownPartner(sandbox.state, 5);
    const result = await sandbox.client.fetchBusinessPartnerV3({
      body: {
        svcId,
        featuresOn: ['SHOW_DEBUG_INFO', 'SHOW_RAW_DATA', 'SHOW_RAW_DATA_JSON', 'SCREEN_BUSINESS_NAMES'],
        outboundMapping: 'ERP',
      },
    });
    expect(result.debugInfo).toMatchObject({ features: expect.arrayContaining(['SHOW_DEBUG_INFO']) });
    expect(result.rawRecord).toContainEqual({ key: 'svcId', value: svcId });
    expect(result.rawRecordJson).toMatchObject({ svcId });
    expect(result.screeningResult).toMatchObject({ status: 'NO_HIT' });
    expect(result.mappedRecord).toHaveProperty('name1');
    const switchedOff = await sandbox.client.fetchBusinessPartnerV3({
      body: { svcId, featuresOn: ['SHOW_RAW_DATA'], featuresOff: ['SHOW_RAW_DATA'] },
    });
    expect(switchedOff.rawRecord).toBeUndefined();
  });

  it('v3 batch: one result per svcId, in order', async () => {
    const svcIds = [
      knownPartner(sandbox.state, 1).svcId,
      'OPENREG:NOPE',
      knownPartner(sandbox.state, 2).svcId,
    ];
    const results = await sandbox.client.fetchBusinessPartnersBatchV3({ body: { svcIds } });
    expect(results.map((result) => [result.svcId, result.status])).toEqual([
      [svcIds[0], 'OK'],
      [svcIds[1], 'INVALID_INPUT'],
      [svcIds[2], 'OK'],
    ]);
  });

  it('v4: answers a status object, fetches the best match of a businessPartner, and computes ultimates', async () => {
    const partner = knownPartner(sandbox.state, 8);
    const found = await sandbox.client.fetchBusinessPartnerV4({
      body: { svcId: partner.svcId, featuresOn: ['SHOW_COMMERCIAL_ULTIMATE', 'DETECT_LEGAL_ENTITY'] },
    });
    expect(found.status).toMatchObject({ code: 'OK' });
    expect(found).not.toHaveProperty('message');
    expect(found.commercialUltimate).toHaveProperty('hierarchyLevel');
    expect(found.legalEntity?.names).toBeDefined();
    const missing = await sandbox.client.fetchBusinessPartnerV4({ body: { svcId: 'OPENREG:NOPE' } });
    expect(missing.status?.code).toBe('INVALID_INPUT');
    const byPartner = await sandbox.client.fetchBusinessPartnerV4({
      body: { businessPartner: normalizedQuery(partner) },
    });
    expect(partner.allSvcIds).toContain(byPartner.svcId);
  });
});

describe('sandbox relations', () => {
  it('pages through every relation and applies the type, class and date filters', async () => {
    const svcId = partnerWithRelations(3);
    const all = await sandbox.client.fetchBusinessPartnerRelationsV3({ body: { svcId, limit: 1000 } });
    const walked = [];
    for await (const relation of iterateBusinessPartnerRelations(sandbox.client, {
      body: { svcId, limit: 1 },
    })) {
      walked.push(relation);
    }
    expect(walked).toEqual(all.values);
    const subsidiaries = await sandbox.client.fetchBusinessPartnerRelationsV3({
      body: { svcId, typeTechnicalKey: 'SUBSIDIARY', classTechnicalKey: 'OWNERSHIP' },
    });
    expect(subsidiaries.values?.every((relation) => relation.typeTechnicalKey === 'SUBSIDIARY')).toBe(true);
    const startedAt = all.values?.map((relation) => relation.startedAt ?? '').sort() ?? [];
    const median = startedAt[Math.floor(startedAt.length / 2)] ?? '';
    const later = await sandbox.client.fetchBusinessPartnerRelationsV3({
      body: { svcId, startedAfter: median },
    });
    expect(later.values?.every((relation) => (relation.startedAt ?? '') > median)).toBe(true);
    const ended = await sandbox.client.fetchBusinessPartnerRelationsV3({
      body: { svcId, endedBefore: '2100-01-01T00:00:00Z', endedAfter: '1900-01-01T00:00:00Z' },
    });
    expect(ended.values?.every((relation) => relation.endedAt !== undefined)).toBe(true);
  });

  it('answers 404 for an unknown partner and 400 for a date that is not one', async () => {
    expect(
      (await sandbox.raw('POST', '/v3/businesspartners/fetchrelations', { body: { svcId: 'X:1' } })).status,
    ).toBe(404);
    const badDate = await sandbox.raw('POST', '/v3/businesspartners/fetchrelations', {
      body: { svcId: partnerWithRelations(1), endedAfter: 'yesterday' },
    });
    expect(badDate.body).toMatchObject({ code: 'INVALID_REQUEST', field: 'body.endedAfter' });
  });
});

describe('sandbox supplier gateway, EXTD fetch and overlap logs', () => {
  it('creates a supplier record and fetches it with the minority indicator only on request', async () => {
    const created = await sandbox.client.createSupplierGatewayRecord({
      body: {
        supplierGateway: { CompanyName: 'Acme Supplies Inc', Country: 'US', Ethnicity: 'Hispanic American' },
      },
    });
    expect(created.Code).toBe('CREATED');
    const supplierNumber = created.Supplier?.SupplierNumber ?? '';
    const plain = await sandbox.client.fetchSupplierGatewayRecord({ body: { supplierNumber } });
    expect(plain.minorityIndicator).toBeUndefined();
    const enriched = await sandbox.client.fetchSupplierGatewayRecord({
      body: { svcId: plain.svcId ?? '', featuresOn: ['ENRICH_MINORITY_INDICATOR'] },
    });
    expect(enriched).toMatchObject({
      supplierGateway: { CompanyName: 'Acme Supplies Inc' },
      minorityIndicator: { value: 'Y' },
    });
    expect(
      (await sandbox.raw('POST', '/sgw/businesspartners/fetch', { body: { supplierNumber: 'none' } })).status,
    ).toBe(404);
  });

  it('fetches the EXTD company record with data blocks per feature (deprecated operation)', async () => {
    const { svcId } = partnerWithSource(sandbox.state, 'EXTD');
    const result = await sandbox.client.fetchExtdBusinessPartner({
      body: { svcId, featuresOn: ['ACTIVATE_MASTER_DATA_EXTENDED'], includeLinkage: true },
    });
    expect(result.svcId).toBe(svcId);
    expect(Object.keys(result.dataBlocks ?? {}).sort()).toEqual([
      'COMPANYINFO_L1_V1',
      'COMPANYINFO_L2_V1',
      'HIERARCHYCONNECTIONS_L1_V1',
      'PRINCIPALSCONTACTS_L2_V2',
    ]);
    expect(result.linkage).toHaveProperty('subsidiaries');
  });

  it('reads overlap logs of a monitored storage page by page; 404 for an unknown storage', async () => {
    const first = await sandbox.client.getOverlapLogResults({
      path: { storageId: 'erp-customers' },
      query: { limit: 2 },
    });
    expect(first.values?.[0]?.overlappingSvcIds?.length).toBeGreaterThan(0);
    expect(first.total).toBeGreaterThan(3);
    expect(first.nextStartAfter).toBe('2');
    const second = await sandbox.client.getOverlapLogResults({
      path: { storageId: 'erp-customers' },
      query: { limit: 2, startAfter: first.nextStartAfter },
    });
    const all = await sandbox.client.getOverlapLogResults({
      path: { storageId: 'erp-customers' },
      query: { limit: 4 },
    });
    // The second page goes on where the first ended.
    expect([...(first.values ?? []), ...(second.values ?? [])].map((entry) => entry.svcId)).toEqual(
      all.values?.map((entry) => entry.svcId),
    );
    expect(second.nextStartAfter).toBe('4');
    const unmonitored = await sandbox.client.getOverlapLogResults({ path: { storageId: 'storage-1' } });
    expect(unmonitored.total).toBe(0);
    expect((await sandbox.raw('GET', '/v3/overlaplogs/nope/results')).status).toBe(404);
  });
});
