import { afterEach, describe, expect, it } from 'vitest';
import {
  iterateBulkLookupResults,
  iterateBusinessPartnerRelations,
  iterateConfigurations,
  iterateExtdLookupJobResults,
  iterateLookupMatchesV4,
  walkCursorPages,
} from '../../src/refdata/index.ts';
import { clientFor, rejectionOf } from './support/client-fixtures.ts';
import { startTestServer, type RecordedRequest, type TestServer } from './support/refdata-test-server.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Seven items served three per page; the cursor is the index of the last item sent. */
const ITEMS = Array.from({ length: 7 }, (_, index) => `item-${index}`);
function pageAfter(startAfter: string | undefined): { values: string[]; nextStartAfter?: string } {
  const from = startAfter === undefined ? 0 : Number(startAfter) + 1;
  const values = ITEMS.slice(from, from + 3);
  const last = from + values.length - 1;
  return last < ITEMS.length - 1 ? { values, nextStartAfter: String(last) } : { values };
}

const cursorInBody = (request: RecordedRequest): string | undefined =>
  (JSON.parse(request.body) as { startAfter?: string }).startAfter;
const cursorInQuery = (request: RecordedRequest): string | undefined =>
  request.query.get('startAfter') ?? undefined;

async function collect<Item>(items: AsyncIterable<Item>): Promise<Item[]> {
  const all: Item[] = [];
  for await (const item of items) all.push(item);
  return all;
}

describe('paging iterators', () => {
  it('walks v4 lookup pages, sending each nextStartAfter as body.startAfter', async () => {
    server = await startTestServer((request) => {
      const page = pageAfter(cursorInBody(request));
      return { body: { ...page, values: page.values.map((svcId) => ({ svcId, score: 0.9 })) } };
    });
    const client = clientFor(server.url, 'apiKey');
    const matches = await collect(iterateLookupMatchesV4(client, { body: { limit: 3, maxCandidates: 50 } }));
    expect(matches.map((match) => match.svcId)).toEqual(ITEMS);
    expect(server.requests.map(cursorInBody)).toEqual([undefined, '2', '5']);
    expect(server.requests.map((request) => JSON.parse(request.body).limit)).toEqual([3, 3, 3]);
  });

  it('walks relation pages', async () => {
    server = await startTestServer((request) => {
      const page = pageAfter(cursorInBody(request));
      return { body: { ...page, values: page.values.map((svcId) => ({ svcId })) } };
    });
    const client = clientFor(server.url, 'apiKey');
    const relations = await collect(iterateBusinessPartnerRelations(client, { body: { svcId: 'EXTD:1' } }));
    expect(relations.map((relation) => relation.svcId)).toEqual(ITEMS);
  });

  it.each(['fetch', 'lookup'] as const)(
    'walks %s configuration list pages via query.startAfter',
    async (kind) => {
      server = await startTestServer((request) => {
        const page = pageAfter(cursorInQuery(request));
        return { body: { ...page, values: page.values.map((id) => ({ id })) } };
      });
      const client = clientFor(server.url, 'apiKey');
      const configurations = await collect(iterateConfigurations(client, kind, { query: { limit: 3 } }));
      expect(configurations.map((configuration) => configuration.id)).toEqual(ITEMS);
      expect(new Set(server.requests.map((request) => request.path))).toEqual(
        new Set([`/configurations/businesspartner${kind}`]),
      );
      expect(server.requests.map(cursorInQuery)).toEqual([undefined, '2', '5']);
    },
  );

  it('walks EXTD job result pages, keeping the filters on every page', async () => {
    server = await startTestServer((request) => {
      const page = pageAfter(cursorInQuery(request));
      return { body: { ...page, values: page.values.map((businessPartnerId) => ({ businessPartnerId })) } };
    });
    const client = clientFor(server.url, 'apiKey');
    const results = await collect(
      iterateExtdLookupJobResults(client, {
        path: { id: 'job-1' },
        query: { limit: 3, businessPartnerId: ['a', 'b'] },
      }),
    );
    expect(results.map((result) => result.businessPartnerId)).toEqual(ITEMS);
    expect(server.requests.every((request) => request.path === '/extd/lookupjobs/job-1/results')).toBe(true);
    expect(server.requests.map((request) => request.query.getAll('businessPartnerId'))).toEqual([
      ['a', 'b'],
      ['a', 'b'],
      ['a', 'b'],
    ]);
  });

  it('walks bulk lookup result pages', async () => {
    server = await startTestServer((request) => {
      const { values, nextStartAfter } = pageAfter(cursorInQuery(request));
      return { body: { id: 'bulk-1', results: values.map((taskId) => ({ taskId })), nextStartAfter } };
    });
    const client = clientFor(server.url, 'apiKey');
    const results = await collect(iterateBulkLookupResults(client, { path: { id: 'bulk-1' } }));
    expect(results.map((result) => result.taskId)).toEqual(ITEMS);
  });

  it('reads the next page only when the consumer asks for more', async () => {
    server = await startTestServer((request) => ({ body: pageAfter(cursorInQuery(request)) }));
    const client = clientFor(server.url, 'apiKey');
    for await (const configuration of iterateConfigurations(client, 'fetch')) {
      expect(configuration).toBe('item-0');
      break;
    }
    expect(server.requests).toHaveLength(1);
  });

  it('fails with REFDATA_PAGE_CURSOR_REPEATED instead of looping on a repeated cursor', async () => {
    const pages = walkCursorPages(
      'listFetchConfigurations',
      async () => ({ items: [1], nextStartAfter: 'same' }),
      'same',
    );
    expect(await rejectionOf(collect(pages))).toMatchObject({ code: 'REFDATA_PAGE_CURSOR_REPEATED' });
  });
});
