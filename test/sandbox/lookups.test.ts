import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iterateLookupMatchesV4 } from '../../src/refdata/index.ts';
import { knownPartner, normalizedQuery, partnerWithSource } from './support/partners.ts';
import { startTestSandbox, type TestSandbox } from './support/sandbox-fixtures.ts';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(() => sandbox.close());

describe('sandbox v4 lookup', () => {
  it('finds the organization a query was built from, best first, with scores and a golden record', async () => {
    const partner = knownPartner(sandbox.state, 21);
    const page = await sandbox.client.lookupBusinessPartnersV4({
      body: { businessPartner: normalizedQuery(partner) },
    });
    const scores = (page.values ?? []).map((match) => match.score ?? 0);
    expect(page.values?.[0]?.svcId).toBe(partner.svcId);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(partner.allSvcIds).toContain(page.goldenRecord?.svcId);
    expect(page.annotations?.[0]).toMatchObject({ type: 'MATCH_CLASSIFICATION', value: 'MATCH' });
  });

  it('pages with startAfter/nextStartAfter over the same candidates as one page', async () => {
    const body = {
      businessPartner: { names: [{ value: 'Logistik' }], addresses: [{ country: { shortName: 'DE' } }] },
      matchingThreshold: 0,
    };
    const whole = await sandbox.client.lookupBusinessPartnersV4({ body: { ...body, limit: 1000 } });
    const walked = [];
    for await (const match of iterateLookupMatchesV4(sandbox.client, { body: { ...body, limit: 3 } }))
      walked.push(match);
    expect((whole.total ?? 0) > 3).toBe(true);
    expect(walked.map((match) => match.svcId)).toEqual(whole.values?.map((match) => match.svcId));
  });

  it('answers 400 naming startAfter for a cursor it did not hand out', async () => {
    const response = await sandbox.raw('POST', '/v4/businesspartners/lookup', {
      body: { businessPartner: normalizedQuery(knownPartner(sandbox.state, 21)), startAfter: 'not-a-cursor' },
    });
    expect(response.status).toBe(400);
    expect(response.body.field).toBe('body.startAfter');
  });

  it('answers 400 naming businessPartner for a query with nothing to compare', async () => {
    const response = await sandbox.raw('POST', '/v4/businesspartners/lookup', { body: {} });
    expect(response.status).toBe(400);
    expect(response.body.field).toBe('body.businessPartner');
  });

  it('matches on the identifier alone with ACTIVATE_IDENTIFIER_ONLY_MATCH', async () => {
    const partner = knownPartner(sandbox.state, 30);
    const identifier = partner.identifier;
    if (!identifier) throw new Error('the partner has no identifier');
    const businessPartner = {
      names: [{ value: 'Entirely Different Name' }],
      identifiers: [{ value: identifier.value, type: { technicalKey: identifier.type } }],
    };
    const page = await sandbox.client.lookupBusinessPartnersV4({
      body: { businessPartner, featuresOn: ['ACTIVATE_IDENTIFIER_ONLY_MATCH'] },
    });
    expect(page.values?.[0]?.svcId).toBe(partner.svcId);
    expect(page.values?.[0]?.score).toBe(1);
  });

  it('searches a feature-gated data source only with its activation feature', async () => {
    const { index, svcId } = partnerWithSource(sandbox.state, 'EXTD');
    const businessPartner = normalizedQuery(knownPartner(sandbox.state, index));
    const ids = async (featuresOn: ('ACTIVATE_DATASOURCE_EXTD' | 'ACTIVATE_DATASOURCE_EXTB')[]) =>
      (await sandbox.client.lookupBusinessPartnersV4({ body: { businessPartner, featuresOn } })).values?.map(
        (match) => match.svcId,
      );
    expect(await ids([])).not.toContain(svcId);
    expect(await ids(['ACTIVATE_DATASOURCE_EXTD'])).toContain(svcId);
  });

  it('narrows to the listed dataSources and to the listed storages', async () => {
    const partner = knownPartner(sandbox.state, 21);
    const openOnly = await sandbox.client.lookupBusinessPartnersV4({
      body: { businessPartner: normalizedQuery(partner), dataSources: ['OPENREG'] },
    });
    expect(openOnly.values?.every((match) => match.svcId?.startsWith('OPENREG:'))).toBe(true);

    const { index, svcId } = partnerWithSource(sandbox.state, 'ERP');
    const businessPartner = normalizedQuery(knownPartner(sandbox.state, index));
    const mirror = await sandbox.client.lookupBusinessPartnersV4({
      body: {
        businessPartner,
        featuresOn: ['ACTIVATE_DATASOURCE_STORAGES'],
        storagesDataSources: [{ storageId: 'erp-customers', dataSources: [] }],
      },
    });
    expect(mirror.values?.map((match) => match.svcId)).toContain(svcId);
    const otherMirror = await sandbox.client.lookupBusinessPartnersV4({
      body: {
        businessPartner,
        featuresOn: ['ACTIVATE_DATASOURCE_STORAGES'],
        storagesDataSources: [{ storageId: 'srm-suppliers' }],
      },
    });
    expect(otherMirror.values?.map((match) => match.svcId)).not.toContain(svcId);
  });
});

describe('sandbox v3 lookups, search and golden record', () => {
  it('answers the GET form with totals, page and pageSize', async () => {
    const partner = knownPartner(sandbox.state, 40);
    const page = await sandbox.client.lookupBusinessPartnersSimpleV3({
      query: {
        name: partner.name,
        country: partner.country,
        ...(partner.town ? { locality: partner.town } : {}),
      },
    });
    expect(page.values?.[0]?.svcId).toBe(partner.svcId);
    expect(page.totals).toBeGreaterThanOrEqual(1);
  });

  it('pages the POST form by page/pageSize and by cursor', async () => {
    const body = {
      businessPartner: { names: [{ value: 'Logistik' }], addresses: [{ country: { shortName: 'DE' } }] },
      matchingThreshold: 0,
      maxCandidates: 20,
    };
    const all = await sandbox.client.lookupBusinessPartnersV3({ body: { ...body, pageSize: 20 } });
    const second = await sandbox.client.lookupBusinessPartnersV3({ body: { ...body, pageSize: 2, page: 1 } });
    expect(second.values?.map((match) => match.svcId)).toEqual(
      all.values?.slice(2, 4).map((match) => match.svcId),
    );
    const first = await sandbox.client.lookupBusinessPartnersV3({ body: { ...body, limit: 2 } });
    const next = await sandbox.client.lookupBusinessPartnersV3({
      body: { ...body, limit: 2, ...(first.nextStartAfter ? { startAfter: first.nextStartAfter } : {}) },
    });
    expect(next.values?.map((match) => match.svcId)).toEqual(
      all.values?.slice(2, 4).map((match) => match.svcId),
    );
  });

  it('finds a partner from one line of free text', async () => {
    const partner = knownPartner(sandbox.state, 50);
    const result = await sandbox.client.searchBusinessPartnersV3({
      body: { query: `${partner.name} ${partner.town ?? ''}` },
    });
    expect(result.values?.map((match) => match.svcId)).toContain(partner.svcId);
  });

  it('picks the most complete record as the golden record, and 404s when none exists', async () => {
    const partner = knownPartner(sandbox.state, 60);
    const golden = await sandbox.client.createGoldenRecordV3({ body: { svcIds: [...partner.allSvcIds] } });
    expect(partner.allSvcIds).toContain(golden.svcId);
    expect(golden.matchingProfile).toHaveProperty('completeness');
    const missing = await sandbox.raw('POST', '/v3/businesspartners/goldenrecord', {
      body: { svcIds: ['NOPE:1'] },
    });
    expect(missing.status).toBe(404);
  });
});
