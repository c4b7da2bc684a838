// Every documented limit on both sides of its boundary: the value on the boundary goes through
// the project's client and is served; the value just past it is sent raw (the client would
// refuse to send it) and answered 400 with the field and the limit it broke.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RefDataRequestValidationError } from '../../src/refdata/index.ts';
import { bulkTask, knownPartner, normalizedQuery } from './support/partners.ts';
import { startTestSandbox, type TestSandbox } from './support/sandbox-fixtures.ts';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(() => sandbox.close());

const partner = () => knownPartner(sandbox.state, 3);

interface Rejected {
  value: unknown;
  limit: number | string;
}

async function expectRejected(
  method: string,
  path: string,
  body: unknown,
  field: string,
  limit?: number | string,
) {
  const response = await sandbox.raw(method, path, { body });
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({
    code: 'INVALID_REQUEST',
    field,
    ...(limit === undefined ? {} : { limit }),
  });
}

describe('v4 lookup limits', () => {
  const lookup = (members: Record<string, unknown>) =>
    sandbox.client.lookupBusinessPartnersV4({
      body: { businessPartner: normalizedQuery(partner()), ...members },
    });

  it.each([0, 1000])('serves limit %d', async (limit) => {
    const page = await lookup({ limit });
    expect(page.limit).toBe(limit);
    expect(page.values?.length).toBeLessThanOrEqual(limit);
  });

  it.each<Rejected>([
    { value: -1, limit: 0 },
    { value: 1001, limit: 1000 },
  ])('rejects limit $value', ({ value, limit }) =>
    expectRejected('POST', '/v4/businesspartners/lookup', { limit: value }, 'body.limit', limit),
  );

  it.each([0, 1])('serves matchingThreshold %d', async (matchingThreshold) => {
    const page = await lookup({ matchingThreshold });
    expect(page.values?.every((match) => (match.score ?? 0) >= matchingThreshold)).toBe(true);
  });

  it.each<Rejected>([
    { value: -0.01, limit: 0 },
    { value: 1.01, limit: 1 },
  ])('rejects matchingThreshold $value', ({ value, limit }) =>
    expectRejected(
      'POST',
      '/v4/businesspartners/lookup',
      { matchingThreshold: value },
      'body.matchingThreshold',
      limit,
    ),
  );

  it.each([20, 200])('serves maxCandidates %d', async (maxCandidates) => {
    expect((await lookup({ maxCandidates })).total).toBeLessThanOrEqual(maxCandidates);
  });

  it.each<Rejected>([
    { value: 19, limit: 20 },
    { value: 201, limit: 200 },
  ])('rejects maxCandidates $value', ({ value, limit }) =>
    expectRejected(
      'POST',
      '/v4/businesspartners/lookup',
      { maxCandidates: value },
      'body.maxCandidates',
      limit,
    ),
  );

  it('is refused by the client before sending, so nothing reaches the server', async () => {
    const before = (await sandbox.stats()).requestsByOperation.lookupBusinessPartnersV4 ?? 0;
    const error = await lookup({ limit: 1001 }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RefDataRequestValidationError);
    expect((await sandbox.stats()).requestsByOperation.lookupBusinessPartnersV4 ?? 0).toBe(before);
  });
});

describe('bulk lookup limits', () => {
  const path = '/v4/businesspartners/lookup/bulks';

  it('serves the bounds of limit, matchingThreshold and maxCandidates', async () => {
    for (const members of [
      { limit: 0, matchingThreshold: 0, maxCandidates: 20 },
      { limit: 1000, matchingThreshold: 1, maxCandidates: 200 },
    ]) {
      const bulk = await sandbox.client.createBulkLookup({
        body: { tasks: [bulkTask('t1', partner())], ...members },
      });
      expect(bulk).toMatchObject(members);
    }
  });

  it.each([
    ['limit', -1, 0],
    ['limit', 1001, 1000],
    ['matchingThreshold', -0.01, 0],
    ['matchingThreshold', 1.01, 1],
    ['maxCandidates', 19, 20],
    ['maxCandidates', 201, 200],
  ] as const)('rejects %s %d', (member, value, limit) =>
    expectRejected('POST', path, { tasks: [], [member]: value }, `body.${member}`, limit),
  );
});

describe('v3 lookup limits', () => {
  const path = '/v3/businesspartners/lookup';
  const lookup = (members: Record<string, unknown>) =>
    sandbox.client.lookupBusinessPartnersV3({
      body: { businessPartner: normalizedQuery(partner()), ...members },
    });

  it.each([1, 1000])('serves pageSize %d', async (pageSize) => {
    expect((await lookup({ pageSize })).pageSize).toBe(pageSize);
  });

  it('serves page 0, limit 0 and limit 1000', async () => {
    expect((await lookup({ page: 0 })).page).toBe(0);
    expect((await lookup({ limit: 0 })).values).toEqual([]);
    expect((await lookup({ limit: 1000 })).limit).toBe(1000);
  });

  it.each([
    ['pageSize', 0, 1],
    ['pageSize', 1001, 1000],
    ['page', -1, 0],
    ['limit', -1, 0],
    ['limit', 1001, 1000],
    ['maxCandidates', 19, 20],
    ['maxCandidates', 201, 200],
    ['matchingThreshold', -0.01, 0],
    ['matchingThreshold', 1.01, 1],
  ] as const)('rejects %s %d', (member, value, limit) =>
    expectRejected('POST', path, { [member]: value }, `body.${member}`, limit),
  );
});

describe('event store initializer job limits', () => {
  const path = '/public/jobs/eventStoreInitializerJobs';
  const create = (members: Record<string, unknown>) =>
    sandbox.client.createEventStoreInitializerJob({ body: { storageId: 'storage-1', ...members } });

  it.each([1, 500])('serves batchSize %d', async (batchSize) => {
    expect((await create({ batchSize })).batchSize).toBe(batchSize);
  });

  it.each<Rejected>([
    { value: 0, limit: 1 },
    { value: 501, limit: 500 },
  ])('rejects batchSize $value', ({ value, limit }) =>
    expectRejected('POST', path, { storageId: 'storage-1', batchSize: value }, 'body.batchSize', limit),
  );

  it('serves 10 unique tags, rejects 11 tags and duplicate tags', async () => {
    const tags = Array.from({ length: 11 }, (_, index) => `tag-${index}`);
    expect((await create({ tags: tags.slice(0, 10) })).status).toBeDefined();
    await expectRejected('POST', path, { storageId: 'storage-1', tags }, 'body.tags', 10);
    await expectRejected('POST', path, { storageId: 'storage-1', tags: ['a', 'a'] }, 'body.tags', 'unique');
  });

  it('rejects a job without storageId', () => expectRejected('POST', path, {}, 'body.storageId'));
});

describe('quota limits', () => {
  const item = { service: { technicalKey: 'EXTD' }, organization: { id: 'default-org' } };

  it.each([1, 100])('serves usage reads of %d items', async (count) => {
    const usage = await sandbox.client.getQuotaUsage({
      body: { values: Array.from({ length: count }, () => item) },
    });
    expect(usage.values).toHaveLength(count);
  });

  it.each<Rejected>([
    { value: 0, limit: 1 },
    { value: 101, limit: 100 },
  ])('rejects usage reads of $value items', ({ value, limit }) =>
    expectRejected(
      'POST',
      '/quotas/usage',
      { values: Array.from({ length: value as number }, () => item) },
      'body.values',
      limit,
    ),
  );

  it('serves quotaAmount -1 and rejects -2', async () => {
    const consumed = await sandbox.client.consumeQuota({
      body: { service: { technicalKey: 'EXTD' }, quotaAmount: -1 },
    });
    expect(consumed.status).toBe('OK');
    await expectRejected(
      'POST',
      '/quotas/consume',
      { service: { technicalKey: 'EXTD' }, quotaAmount: -2 },
      'body.quotaAmount',
      -1,
    );
  });
});

describe('EXTD lookup job results limits', () => {
  let jobId: string;
  beforeAll(async () => {
    const job = await sandbox.client.createExtdLookupJob({ body: { storageId: 'storage-1' } });
    jobId = job.id ?? '';
    sandbox.clock.advance(60 * 60_000);
  });

  it.each([1, 1000])('serves limit %d', async (limit) => {
    const page = await sandbox.client.listExtdLookupJobResults({ path: { id: jobId }, query: { limit } });
    expect(page.limit).toBe(limit);
    expect(page.values).toHaveLength(Math.min(limit, 100));
  });

  it.each<Rejected>([
    { value: 0, limit: 1 },
    { value: 1001, limit: 1000 },
  ])('rejects limit $value', async ({ value, limit }) => {
    const response = await sandbox.raw('GET', `/extd/lookupjobs/${jobId}/results?limit=${String(value)}`);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ field: 'query.limit', limit });
  });
});

describe('search limits', () => {
  it.each([0, 1000])('serves limit %d', async (limit) => {
    const result = await sandbox.client.searchBusinessPartnersV3({ body: { query: partner().name, limit } });
    expect(result.values?.length).toBeLessThanOrEqual(limit);
  });

  it.each<Rejected>([
    { value: -1, limit: 0 },
    { value: 1001, limit: 1000 },
  ])('rejects limit $value', ({ value, limit }) =>
    expectRejected('POST', '/v3/businesspartners/search', { query: 'x', limit: value }, 'body.limit', limit),
  );
});
