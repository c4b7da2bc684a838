import { afterEach, describe, expect, it } from 'vitest';
import {
  RefDataRequestValidationError,
  RequestValidator,
  getRequestValidator,
  type RequestParts,
} from '../../src/refdata/index.ts';
import { parseReferenceDataDocument } from '../../src/refdata/openapi-document.ts';
import { clientFor, rejectionOf } from './support/client-fixtures.ts';
import { startTestServer, type TestServer } from './support/refdata-test-server.ts';

const validator = getRequestValidator();
const user = { 'X-Credential-Username': 'etl-robot' };
const usageItem = { service: { technicalKey: 'EXTD' }, organization: { id: 'org-1' } };

// [operation, request, field, keyword, limit]: one row per documented limit.
const OUT_OF_RANGE: [string, RequestParts, string, string, number | string | undefined][] = [
  ['lookupBusinessPartnersV4', { body: { limit: -1 } }, 'body.limit', 'minimum', 0],
  ['lookupBusinessPartnersV4', { body: { limit: 1001 } }, 'body.limit', 'maximum', 1000],
  ['lookupBusinessPartnersV4', { body: { matchingThreshold: 1.01 } }, 'body.matchingThreshold', 'maximum', 1],
  ['lookupBusinessPartnersV4', { body: { matchingThreshold: -0.1 } }, 'body.matchingThreshold', 'minimum', 0],
  ['lookupBusinessPartnersV4', { body: { maxCandidates: 19 } }, 'body.maxCandidates', 'minimum', 20],
  ['lookupBusinessPartnersV4', { body: { maxCandidates: 201 } }, 'body.maxCandidates', 'maximum', 200],
  ['lookupBusinessPartnersV4', { body: { maxCandidates: 20.5 } }, 'body.maxCandidates', 'type', undefined],
  ['lookupBusinessPartnersV3', { body: { pageSize: 0 } }, 'body.pageSize', 'minimum', 1],
  ['lookupBusinessPartnersV3', { body: { page: -1 } }, 'body.page', 'minimum', 0],
  ['createBulkLookup', { body: { maxCandidates: 500 } }, 'body.maxCandidates', 'maximum', 200],
  [
    'createBulkLookup',
    { body: { tasks: [{ id: 't1' }] } },
    'body.tasks[0].businessPartner',
    'required',
    undefined,
  ],
  ['listExtdLookupJobResults', { path: { id: 'j' }, query: { limit: 0 } }, 'query.limit', 'minimum', 1],
  ['listExtdLookupJobResults', { path: { id: 'j' }, query: { limit: 1001 } }, 'query.limit', 'maximum', 1000],
  [
    'createEventStoreInitializerJob',
    { headers: user, body: { storageId: 's', batchSize: 0 } },
    'body.batchSize',
    'minimum',
    1,
  ],
  [
    'createEventStoreInitializerJob',
    { headers: user, body: { storageId: 's', batchSize: 501 } },
    'body.batchSize',
    'maximum',
    500,
  ],
  [
    'createEventStoreInitializerJob',
    { headers: user, body: { storageId: 's', tags: ['a', 'a'] } },
    'body.tags',
    'uniqueItems',
    'unique',
  ],
  [
    'createEventStoreInitializerJob',
    { headers: user, body: { storageId: 's', tags: Array.from({ length: 11 }, (_, i) => `t${i}`) } },
    'body.tags',
    'maxItems',
    10,
  ],
  ['createEventStoreInitializerJob', { headers: user, body: {} }, 'body.storageId', 'required', undefined],
  [
    'createEventStoreInitializerJob',
    { body: { storageId: 's' } },
    'header.x-credential-username',
    'required',
    undefined,
  ],
  [
    'createEventStoreInitializerJob',
    { headers: user, body: { storageId: 's', featuresOn: ['UPDATES'] } },
    'body.featuresOn[0]',
    'enum',
    undefined,
  ],
  ['getQuotaUsage', { headers: user, body: { values: [] } }, 'body.values', 'minItems', 1],
  [
    'getQuotaUsage',
    { headers: user, body: { values: Array(101).fill(usageItem) } },
    'body.values',
    'maxItems',
    100,
  ],
  [
    'getQuotaUsage',
    { headers: user, body: { values: [{ service: {} }] } },
    'body.values[0].organization',
    'required',
    undefined,
  ],
  [
    'consumeQuota',
    { headers: user, body: { service: { technicalKey: 'EXTD' }, quotaAmount: -2 } },
    'body.quotaAmount',
    'minimum',
    -1,
  ],
  ['fetchBusinessPartnerV3', { body: {} }, 'body.svcId', 'required', undefined],
  [
    'fetchBusinessPartnerV3',
    { body: { svcId: 'X:1', outboundMapping: 'CSV' } },
    'body.outboundMapping',
    'enum',
    undefined,
  ],
  ['getBulkLookup', {}, 'path.id', 'required', undefined],
  [
    'upsertRateLimitQuotas',
    { headers: user, query: { scope: 'global' }, body: {} },
    'query.scope',
    'enum',
    undefined,
  ],
];

describe('request validation compiled from the OpenAPI document', () => {
  it.each(OUT_OF_RANGE)('%s rejects %j at %s (%s)', (operation, parts, field, keyword, limit) => {
    const { valid, issues } = validator.validate(operation, parts);
    expect(valid).toBe(false);
    expect(issues).toContainEqual(
      expect.objectContaining({ field, keyword, ...(limit === undefined ? {} : { limit }) }),
    );
  });

  it('accepts the boundary values of every range', () => {
    const accepted: [string, RequestParts][] = [
      ['lookupBusinessPartnersV4', { body: { limit: 0, matchingThreshold: 0, maxCandidates: 20 } }],
      ['lookupBusinessPartnersV4', { body: { limit: 1000, matchingThreshold: 1, maxCandidates: 200 } }],
      ['listExtdLookupJobResults', { path: { id: 'j' }, query: { limit: 1 } }],
      ['listExtdLookupJobResults', { path: { id: 'j' }, query: { limit: 1000 } }],
      [
        'createEventStoreInitializerJob',
        { headers: user, body: { storageId: 's', batchSize: 500, tags: ['a', 'b'] } },
      ],
      ['getQuotaUsage', { headers: user, body: { values: Array(100).fill(usageItem) } }],
      ['consumeQuota', { headers: user, body: { service: { technicalKey: 'EXTD' }, quotaAmount: -1 } }],
    ];
    for (const [operation, parts] of accepted)
      expect(validator.validate(operation, parts).issues, operation).toEqual([]);
  });

  it('matches header names case-insensitively', () => {
    const parts = { path: { jobId: 'j' }, headers: { 'x-credential-username': 'etl-robot' } };
    expect(validator.validate('getEventStoreInitializerJob', parts).valid).toBe(true);
  });

  it('coerces URL strings to the parameter types when a server asks for it', () => {
    const parts = { path: { id: 'j' }, query: { limit: '1001', businessPartnerId: 'bp-1' } };
    expect(validator.validate('listExtdLookupJobResults', parts, { coerceParameters: true })).toEqual({
      valid: false,
      issues: [
        { field: 'query.limit', keyword: 'maximum', message: 'query.limit must be <= 1000', limit: 1000 },
      ],
      parts: { path: { id: 'j' }, query: { limit: 1001, businessPartnerId: ['bp-1'] }, headers: {} },
    });
    const flag = validator.validate(
      'listFetchConfigurations',
      { query: { defaultConfiguration: 'true' } },
      { coerceParameters: true },
    );
    expect(flag.parts.query).toEqual({ defaultConfiguration: true });
  });

  it('throws REFDATA_INVALID_REQUEST listing every issue from assertValid', () => {
    let thrown: unknown;
    try {
      validator.assertValid('lookupBusinessPartnersV4', { body: { limit: 5000, maxCandidates: 1 } });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RefDataRequestValidationError);
    expect(thrown).toMatchObject({
      code: 'REFDATA_INVALID_REQUEST',
      operation: 'lookupBusinessPartnersV4',
      message:
        'lookupBusinessPartnersV4: invalid request: body.limit must be <= 1000; body.maxCandidates must be >= 20',
    });
  });

  it('refuses to compile a schema keyword it does not understand, so no limit is skipped silently', () => {
    const things = new RequestValidator(
      documentWithThing('{ type: object, properties: { size: { type: integer, maximun: 5 } } }'),
    );
    expect(() => things.validate('createThing', { body: { size: 1 } })).toThrow(/maximun/);
  });

  // Operations are compiled at their first request (not at start): this is where a schema of
  // the repository's document that ajv cannot compile is caught before any request needs it.
  it('compiles every operation of the repository document', () => {
    const fresh = new RequestValidator();
    for (const operationId of fresh.operationIds) {
      expect(() => fresh.validate(operationId, {}), operationId).not.toThrow();
    }
  });
});

/** A one-operation document whose body is `thingSchema` (YAML flow style). */
function documentWithThing(thingSchema: string) {
  return parseReferenceDataDocument(`
paths:
  /things:
    post:
      operationId: createThing
      x-root: base
      x-safe-to-retry: false
      requestBody:
        required: true
        content: { application/json: { schema: { $ref: '#/components/schemas/Thing' } } }
      responses: { '204': { description: Created. } }
components:
  schemas:
    Thing: ${thingSchema}
`);
}

// Defects of the hand-written validator this one replaced, one test each.
describe('request validation follows JSON Schema where the old subset did not', () => {
  const things = new RequestValidator(
    documentWithThing(`
      type: object
      x-assumed: true
      properties:
        name: { type: string, maxLength: 3 }
        origin: { const: { x: 0, y: 0 } }
        corner: { enum: [{ x: 0, y: 0 }, { x: 1, y: 1 }] }
        createdAt: { type: string, format: date-time }
        contact:
          anyOf:
            - { required: [email] }
            - { required: [phone], properties: { phone: { type: string } } }`),
  );
  const issuesOf = (body: unknown) => things.validate('createThing', { body }).issues;

  it('maxLength counts characters, not UTF-16 code units', () => {
    expect(issuesOf({ name: '😀😀😀' })).toEqual([]);
    expect(issuesOf({ name: '😀😀😀😀' })).toEqual([
      expect.objectContaining({ field: 'body.name', keyword: 'maxLength', limit: 3 }),
    ]);
  });

  it('const and enum compare objects by value', () => {
    expect(issuesOf({ origin: { x: 0, y: 0 }, corner: { y: 1, x: 1 } })).toEqual([]);
    expect(issuesOf({ origin: { x: 0, y: 1 }, corner: { x: 2, y: 2 } })).toEqual([
      expect.objectContaining({ field: 'body.origin', keyword: 'const' }),
      expect.objectContaining({ field: 'body.corner', keyword: 'enum' }),
    ]);
  });

  it('format is checked, not ignored', () => {
    expect(issuesOf({ createdAt: '2025-01-01T00:00:00Z' })).toEqual([]);
    expect(issuesOf({ createdAt: 'yesterday' })).toEqual([
      expect.objectContaining({ field: 'body.createdAt', keyword: 'format', limit: 'date-time' }),
    ]);
  });

  it('anyOf stops at the first branch that matches instead of running every branch', () => {
    let phoneReads = 0;
    const contact = { email: 'a@example.com' };
    Object.defineProperty(contact, 'phone', { enumerable: true, get: () => String(++phoneReads) });
    expect(issuesOf({ contact })).toEqual([]);
    expect(phoneReads).toBe(0);
  });

  it('reports an anyOf that no branch matches once, at its field', () => {
    expect(issuesOf({ contact: {} })).toEqual([
      {
        field: 'body.contact',
        keyword: 'anyOf',
        message: 'body.contact must match one of the allowed shapes',
      },
    ]);
  });
});

describe('request validation in the client', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('rejects out-of-range values before any request reaches the server', async () => {
    server = await startTestServer(() => ({ body: {} }));
    const client = clientFor(server.url, 'oauth');
    const attempts = [
      client.lookupBusinessPartnersV4({ body: { limit: 1001 } }),
      client.lookupBusinessPartnersV4({ body: { matchingThreshold: 2 } }),
      client.createBulkLookup({ body: { maxCandidates: 10 } }),
      client.listExtdLookupJobResults({ path: { id: 'j' }, query: { limit: 0 } }),
      client.createEventStoreInitializerJob({ body: { storageId: 's', batchSize: 501 } }),
      client.createEventStoreInitializerJob({ body: { storageId: 's', tags: ['x', 'x'] } }),
      client.getQuotaUsage({ body: { values: [] } }),
    ];
    for (const attempt of attempts) {
      expect(await rejectionOf(attempt)).toMatchObject({ code: 'REFDATA_INVALID_REQUEST', canRetry: false });
    }
    // Not even a token request: validation runs before credentials are fetched.
    expect(server.requests).toEqual([]);
  });
});
