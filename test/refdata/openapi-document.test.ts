import { validate } from '@readme/openapi-parser';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RefDataClient } from '../../src/refdata/index.ts';
import {
  REFERENCE_DATA_DOCUMENT_URL,
  loadReferenceDataDocument,
} from '../../src/refdata/openapi-document.ts';

const document = loadReferenceDataDocument();
const operations = [...document.operations.values()];
const schema = (name: string): Record<string, unknown> =>
  document.resolveRef(`#/components/schemas/${name}`) as Record<string, unknown>;
const property = (schemaName: string, name: string): Record<string, unknown> =>
  (schema(schemaName).properties as Record<string, Record<string, unknown>>)[name] ?? {};

// Copied from the spec's Endpoints section (items 1-27 with operations), its configurations
// table and its Authentication section: [method, path, root].
const SPEC_OPERATIONS = [
  ['POST', '/v3/businesspartners/fetch', 'base'], // 1
  ['POST', '/v3/businesspartners/fetch-batch', 'base'], // 2
  ['POST', '/v3/businesspartners/fetchrelations', 'base'], // 3
  ['GET', '/v3/businesspartners/lookup', 'base'], // 4
  ['POST', '/v3/businesspartners/lookup', 'base'], // 5
  ['POST', '/v3/businesspartners/search', 'base'], // 6
  ['POST', '/v3/businesspartners/goldenrecord', 'base'], // 7
  ['POST', '/sgw/businesspartners', 'base'], // 8
  ['POST', '/sgw/businesspartners/fetch', 'base'], // 9
  ['POST', '/extd/businesspartners/fetch', 'base'], // 10
  ['POST', '/v4/businesspartners/lookup', 'base'], // 11
  ['POST', '/v4/businesspartners/fetch', 'base'], // 12
  ['POST', '/v4/businesspartners/lookup/bulks', 'base'], // 13
  ['GET', '/v4/businesspartners/lookup/bulks/{id}', 'base'], // 14
  ['GET', '/configurations/businesspartnerfetch', 'base'],
  ['POST', '/configurations/businesspartnerfetch', 'base'],
  ['GET', '/configurations/businesspartnerfetch/{configurationId}', 'base'],
  ['PUT', '/configurations/businesspartnerfetch/{configurationId}', 'base'],
  ['DELETE', '/configurations/businesspartnerfetch/{configurationId}', 'base'],
  ['GET', '/configurations/businesspartnerfetch/{configurationId}/versions/{version}', 'base'],
  ['GET', '/configurations/businesspartnerlookup', 'base'],
  ['GET', '/configurations/businesspartnerlookup/{configurationId}', 'base'],
  ['PUT', '/configurations/businesspartnerlookup/{configurationId}', 'base'],
  ['DELETE', '/configurations/businesspartnerlookup/{configurationId}', 'base'],
  ['GET', '/configurations/businesspartnerlookup/{configurationId}/versions/{version}', 'base'],
  ['GET', '/v3/overlaplogs/{storageId}/results', 'base'], // 16
  ['POST', '/extd/lookupjobs', 'base'], // 17
  ['GET', '/extd/lookupjobs/{id}', 'base'], // 18
  ['GET', '/extd/lookupjobs/{id}/results', 'base'], // 19
  ['POST', '/public/jobs/eventStoreInitializerJobs', 'dataExchange'], // 20
  ['GET', '/public/jobs/eventStoreInitializerJobs/{jobId}', 'dataExchange'], // 21
  ['PUT', '/quotas/ratelimits', 'identity'], // 23
  ['GET', '/quotas/ratelimits', 'identity'], // 24
  ['POST', '/quotas/usage', 'usage'], // 26
  ['POST', '/quotas/consume', 'usage'], // 27
  ['POST', '/auth/realms/cs/protocol/openid-connect/token', 'auth'],
] as const;

describe('the reference data OpenAPI document', () => {
  it('validates as OpenAPI 3.1', async () => {
    const result = await validate(fileURLToPath(REFERENCE_DATA_DOCUMENT_URL));
    expect(result).toMatchObject({ valid: true, specification: 'OpenAPI' });
    expect(document.raw.openapi).toMatch(/^3\.1\./);
  });

  it('has exactly the operations of the spec, each under its root', () => {
    const described = operations.map((operation) => [operation.method, operation.path, operation.root]);
    expect(described).toHaveLength(SPEC_OPERATIONS.length);
    expect(new Set(described.map((entry) => entry.join(' ')))).toEqual(
      new Set(SPEC_OPERATIONS.map((entry) => entry.join(' '))),
    );
  });

  it('gives every operation a client method named by its operationId', () => {
    const missing = operations
      .map((operation) => operation.operationId)
      .filter((operationId) => typeof Reflect.get(RefDataClient.prototype, operationId) !== 'function');
    expect(missing).toEqual([]);
  });

  it('marks creates and quota consumption as not safe to retry, and reads as safe', () => {
    const unsafe = operations
      .filter((operation) => !operation.safeToRetry)
      .map((operation) => operation.operationId);
    expect(unsafe.sort()).toEqual(
      [
        'consumeQuota',
        'createBulkLookup',
        'createEventStoreInitializerJob',
        'createExtdLookupJob',
        'createFetchConfiguration',
        'createSupplierGatewayRecord',
        'deleteFetchConfiguration',
        'deleteLookupConfiguration',
        'updateFetchConfiguration',
        'updateLookupConfiguration',
      ].sort(),
    );
    expect(operations.filter((operation) => operation.method === 'GET').every((o) => o.safeToRetry)).toBe(
      true,
    );
  });

  it('declares the credentials each root needs', () => {
    const paths = document.raw.paths as Record<string, Record<string, Record<string, unknown>>>;
    for (const operation of operations) {
      const raw = paths[operation.path]?.[operation.method.toLowerCase()] ?? {};
      const security = raw.security ?? document.raw.security;
      const needsUsername = operation.parameters.some(
        (parameter) =>
          parameter.name === 'X-Credential-Username' && parameter.in === 'header' && parameter.required,
      );
      const expected = {
        base: [[{ apiKey: [] }, { oauth2: [] }], false],
        auth: [[{ clientCredentialsBasic: [] }], false],
        dataExchange: [[{ dataExchangeBasic: [] }], true],
        identity: [[{ oauth2: [] }], true],
        usage: [[], true],
      }[operation.root];
      expect([security, needsUsername], operation.operationId).toEqual(expected);
    }
  });

  it('marks the deprecated items of the spec as deprecated', () => {
    const parameters = document.raw.components as Record<string, Record<string, Record<string, unknown>>>;
    const lookupFeatures = schema('LookupFeature').oneOf as Record<string, unknown>[];
    expect(document.operations.get('fetchExtdBusinessPartner')?.deprecated).toBe(true);
    expect(parameters.parameters?.ExtdUserHeader?.deprecated).toBe(true);
    expect(parameters.parameters?.ExtdPasswordHeader?.deprecated).toBe(true);
    expect(property('FetchRequestV3', 'outboundMapping')).toEqual({
      $ref: '#/components/schemas/OutboundMapping',
    });
    expect(schema('OutboundMapping').deprecated).toBe(true);
    expect(property('LookupConfigurationModel', 'pageSize').deprecated).toBe(true);
    expect(lookupFeatures.find((value) => value.const === 'ACTIVATE_DATASOURCE_CDL')?.deprecated).toBe(true);
  });

  it('gives every x-assumed item a one-line description', () => {
    const undescribed: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (typeof node !== 'object' || node === null) return;
      const record = node as Record<string, unknown>;
      if (
        record['x-assumed'] === true &&
        (typeof record.description !== 'string' || record.description === '')
      ) {
        undescribed.push(where);
      }
      for (const [key, value] of Object.entries(record)) walk(value, `${where}/${key}`);
    };
    walk(document.raw, '#');
    expect(undescribed).toEqual([]);
  });

  it('carries the documented limits and defaults', () => {
    const limits = (schemaName: string, name: string) => {
      const {
        minimum,
        maximum,
        default: byDefault,
        minItems,
        maxItems,
        uniqueItems,
      } = property(schemaName, name);
      return { minimum, maximum, default: byDefault, minItems, maxItems, uniqueItems };
    };
    const results = document.operations.get('listExtdLookupJobResults')?.parameters ?? [];
    expect(limits('LookupRequestV4', 'limit')).toMatchObject({ minimum: 0, maximum: 1000, default: 10 });
    expect(limits('LookupRequestV4', 'matchingThreshold')).toMatchObject({
      minimum: 0,
      maximum: 1,
      default: 0.5,
    });
    expect(limits('LookupRequestV4', 'maxCandidates')).toMatchObject({
      minimum: 20,
      maximum: 200,
      default: 50,
    });
    expect(limits('LookupRequestV3', 'maxCandidates')).toMatchObject({
      minimum: 20,
      maximum: 200,
      default: 10,
    });
    expect(limits('LookupRequestV3', 'pageSize')).toMatchObject({ minimum: 1, maximum: 1000, default: 10 });
    expect(limits('LookupRequestV3', 'page')).toMatchObject({ minimum: 0, default: 0 });
    expect(results.find((parameter) => parameter.name === 'limit')?.schema).toMatchObject({
      minimum: 1,
      maximum: 1000,
      default: 100,
    });
    expect(results.find((parameter) => parameter.name === 'startAfter')?.schema).toMatchObject({
      default: '0',
    });
    expect(limits('EventStoreInitializerJobCreateRequest', 'batchSize')).toMatchObject({
      minimum: 1,
      maximum: 500,
      default: 500,
    });
    expect(limits('EventStoreInitializerJobCreateRequest', 'tags')).toMatchObject({
      maxItems: 10,
      uniqueItems: true,
    });
    expect(limits('QuotaUsageRequest', 'values')).toMatchObject({ minItems: 1, maxItems: 100 });
    expect(limits('QuotaConsumeRequest', 'quotaAmount')).toMatchObject({ minimum: -1, default: 1 });
    expect(limits('ExtdLookupJob', 'progress')).toMatchObject({ minimum: 0, maximum: 100 });
    expect(limits('EventStoreInitializerJob', 'progress')).toMatchObject({ minimum: 0, maximum: 100 });
    expect(schema('ExtdDataSource').default).toBe('EXTD');
  });
});
