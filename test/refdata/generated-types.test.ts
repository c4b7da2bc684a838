import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { RefDataClient, RequestInput, ResponseBody, Schemas } from '../../src/refdata/index.ts';

const repository = fileURLToPath(new URL('../../', import.meta.url));

describe('types generated from the OpenAPI document', () => {
  it('are up to date with the document (npm run check:generated)', () => {
    const output = execFileSync(process.execPath, ['schemas/openapi/generate-types.ts', '--check'], {
      cwd: repository,
      encoding: 'utf8',
    });
    expect(output).toContain('matches');
  }, 30_000);

  it('type the client methods: required parts are required, X-Credential-Username is supplied', () => {
    expectTypeOf<RequestInput<'getBulkLookup'>>().toEqualTypeOf<
      { path: { id: string } } & { query?: { limit?: number; startAfter?: string } }
    >();
    expectTypeOf<Parameters<RefDataClient['getEventStoreInitializerJob']>[0]>().toEqualTypeOf<{
      path: { jobId: string };
    }>();
    expectTypeOf<Parameters<RefDataClient['listFetchConfigurations']>[0]>().toEqualTypeOf<
      RequestInput<'listFetchConfigurations'> | undefined
    >();
    expectTypeOf<ResponseBody<'createBulkLookup'>>().toEqualTypeOf<Schemas['BulkLookup']>();
    expectTypeOf<Schemas['BulkLookupResult']['values']>().toEqualTypeOf<
      Schemas['BusinessPartnerLookupMatch'][] | undefined
    >();
  });
});
