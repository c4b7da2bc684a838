import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iterateConfigurations } from '../../src/refdata/index.ts';
import { bulkTask, knownPartner, normalizedQuery } from './support/partners.ts';
import { startTestSandbox, type TestSandbox } from './support/sandbox-fixtures.ts';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(() => sandbox.close());

describe('sandbox fetch configurations', () => {
  it('creates, reads, updates with a new version per update, reads versions, and deletes', async () => {
    const { client, clock } = sandbox;
    const created = await client.createFetchConfiguration({
      body: { name: 'raw', configuration: { featuresOn: ['SHOW_RAW_DATA'] } },
    });
    expect(created).toMatchObject({ name: 'raw', version: 1, createdBy: 'api-key-user' });
    const id = created.id ?? '';
    clock.advance(1_000);
    const updated = await client.updateFetchConfiguration({
      path: { configurationId: id },
      body: { configuration: { featuresOn: ['SHOW_RAW_DATA_JSON'] } },
    });
    expect(updated).toMatchObject({ id, name: 'raw', version: 2, createdAt: created.createdAt });
    expect(updated.modifiedAt).not.toBe(created.modifiedAt);
    expect(await client.getFetchConfiguration({ path: { configurationId: id } })).toEqual(updated);

    const first = await client.getFetchConfigurationVersion({ path: { configurationId: id, version: 1 } });
    expect(first).toMatchObject({
      configurationId: id,
      version: 1,
      configuration: { featuresOn: ['SHOW_RAW_DATA'] },
    });
    expect(first.id).not.toBe(id);
    const second = await client.getFetchConfigurationVersion({ path: { configurationId: id, version: 2 } });
    expect(second).toMatchObject({
      version: 2,
      modifiedBy: 'api-key-user',
      configuration: { featuresOn: ['SHOW_RAW_DATA_JSON'] },
    });
    expect((await sandbox.raw('GET', `/configurations/businesspartnerfetch/${id}/versions/3`)).status).toBe(
      404,
    );

    expect(await client.deleteFetchConfiguration({ path: { configurationId: id } })).toEqual(updated);
    expect((await sandbox.raw('GET', `/configurations/businesspartnerfetch/${id}`)).status).toBe(404);
    expect((await sandbox.raw('DELETE', `/configurations/businesspartnerfetch/${id}`)).status).toBe(404);
  });

  it('lists by cursor, and only the default one with defaultConfiguration', async () => {
    for (const name of ['a', 'b', 'c'])
      await sandbox.client.createFetchConfiguration({ body: { name, configuration: {} } });
    const walked = [];
    for await (const item of iterateConfigurations(sandbox.client, 'fetch', { query: { limit: 1 } }))
      walked.push(item);
    const whole = await sandbox.client.listFetchConfigurations();
    expect(walked.map((item) => item.id)).toEqual(whole.values?.map((item) => item.id));
    expect(whole.total).toBe(walked.length);
    const defaults = await sandbox.client.listFetchConfigurations({ query: { defaultConfiguration: true } });
    expect(defaults.values?.map((item) => item.id)).toEqual(['fetch-default']);
    const lost = await sandbox.raw('GET', '/configurations/businesspartnerfetch?startAfter=gone');
    expect(lost.body).toMatchObject({ code: 'INVALID_REQUEST', field: 'query.startAfter' });
  });

  it('requires name and configuration on create', async () => {
    const response = await sandbox.raw('POST', '/configurations/businesspartnerfetch', {
      body: { name: 'x' },
    });
    expect(response.body).toMatchObject({ code: 'INVALID_REQUEST', field: 'body.configuration' });
  });

  it('applies a fetch configuration under the request: features merged, request wins', async () => {
    const { svcId } = knownPartner(sandbox.state, 4);
    const configuration = await sandbox.client.createFetchConfiguration({
      body: { name: 'debug', configuration: { featuresOn: ['SHOW_RAW_DATA', 'SHOW_DEBUG_INFO'] } },
    });
    const configurationId = configuration.id ?? '';
    const merged = await sandbox.client.fetchBusinessPartnerV4({
      body: { svcId, configurationId, featuresOn: ['SHOW_RAW_DATA_JSON'], featuresOff: ['SHOW_DEBUG_INFO'] },
    });
    expect(merged.rawRecord).toBeDefined();
    expect(merged.rawRecordJson).toBeDefined();
    expect(merged.debugInfo).toBeUndefined();
    const unknown = await sandbox.raw('POST', '/v3/businesspartners/fetch', {
      body: { svcId, configurationId: 'nope' },
    });
    expect(unknown.body).toMatchObject({ code: 'INVALID_REQUEST', field: 'body.configurationId' });
  });
});

describe('sandbox lookup configurations', () => {
  it('lists the seeded ones, reads, updates into versions and deletes', async () => {
    const list = await sandbox.client.listLookupConfigurations();
    expect(list.values?.map((item) => item.id)).toEqual([
      'lookup-default',
      'lookup-identifier-only',
      'lookup-all-sources',
      'lookup-strict',
    ]);
    const defaults = await sandbox.client.listLookupConfigurations({ query: { defaultConfiguration: true } });
    expect(defaults.values?.map((item) => item.id)).toEqual(['lookup-default']);

    const path = { configurationId: 'lookup-strict' };
    const original = await sandbox.client.getLookupConfiguration({ path });
    const updated = await sandbox.client.updateLookupConfiguration({
      path,
      body: { name: 'Stricter', configuration: { matchingThreshold: 0.9 } },
    });
    expect(updated).toMatchObject({
      version: 2,
      name: 'Stricter',
      configuration: { matchingThreshold: 0.9 },
    });
    const first = await sandbox.client.getLookupConfigurationVersion({ path: { ...path, version: 1 } });
    expect(first).toMatchObject({ name: original.name, configuration: original.configuration });
    expect(await sandbox.client.deleteLookupConfiguration({ path })).toEqual(updated);
    expect((await sandbox.raw('GET', '/configurations/businesspartnerlookup/lookup-strict')).status).toBe(
      404,
    );
  });

  it('rejects an update that breaks a limit of the configuration model', async () => {
    const response = await sandbox.raw('PUT', '/configurations/businesspartnerlookup/lookup-default', {
      body: { configuration: { maxCandidates: 19 } },
    });
    expect(response.body).toMatchObject({ field: 'body.configuration.maxCandidates', limit: 20 });
  });

  it('applies a lookup configuration under a lookup and a bulk: request values win, features merge', async () => {
    const partner = knownPartner(sandbox.state, 9);
    const identifier = partner.identifier;
    if (!identifier) throw new Error('the partner has no identifier');
    const businessPartner = {
      names: [{ value: 'Nothing Alike' }],
      identifiers: [{ value: identifier.value, type: { technicalKey: identifier.type } }],
    };
    const configured = await sandbox.client.lookupBusinessPartnersV4({
      body: { businessPartner, configurationId: 'lookup-identifier-only' },
    });
    expect(configured.values?.[0]?.svcId).toBe(partner.svcId);
    const switchedOff = await sandbox.client.lookupBusinessPartnersV4({
      body: {
        businessPartner,
        configurationId: 'lookup-identifier-only',
        featuresOff: ['ACTIVATE_IDENTIFIER_ONLY_MATCH'],
      },
    });
    expect(switchedOff.values?.[0]?.score ?? 0).toBeLessThan(configured.values?.[0]?.score ?? 0);

    const bulk = await sandbox.client.createBulkLookup({
      body: {
        tasks: [bulkTask('t1', partner)],
        configurationId: 'lookup-all-sources',
        maxCandidates: 30,
        featuresOn: ['ACTIVATE_IDENTIFIER_ONLY_MATCH'],
        featuresOff: ['ACTIVATE_DATASOURCE_GEOPLACES'],
      },
    });
    expect(bulk).toMatchObject({
      configurationId: 'lookup-all-sources',
      limit: 25,
      maxCandidates: 30,
      matchingThreshold: 0.5,
    });
    expect(bulk.featuresOn).toEqual(
      expect.arrayContaining(['ACTIVATE_DATASOURCE_EXTD', 'ACTIVATE_IDENTIFIER_ONLY_MATCH']),
    );
    expect(bulk.featuresOn).not.toContain('ACTIVATE_DATASOURCE_GEOPLACES');
    expect(bulk.featuresOff).toEqual(['ACTIVATE_DATASOURCE_GEOPLACES']);

    const unknown = await sandbox.raw('POST', '/v4/businesspartners/lookup', {
      body: { businessPartner: normalizedQuery(partner), configurationId: 'nope' },
    });
    expect(unknown.body).toMatchObject({ code: 'INVALID_REQUEST', field: 'body.configurationId' });
  });
});
