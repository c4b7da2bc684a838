// Async iterators over the service's cursor pages: a page carries `nextStartAfter`, the next
// request sends it as `startAfter`, and the walk ends when a page has no `nextStartAfter`.
// A page that hands back the cursor it was asked with would repeat forever; that is an error.

import type { RefDataClient } from './client.ts';
import { RefDataPagingError } from './errors.ts';
import type { CallOptions, RequestInput, Schemas } from './operation-types.ts';

export interface CursorPage<Item> {
  nextStartAfter?: string | undefined;
  items: readonly Item[] | undefined;
}

/**
 * Yields every item of every page, reading the next page only when the previous one has been
 * consumed. `readPage` receives the cursor to send (undefined for the first page unless
 * `startAfter` is given).
 */
export async function* walkCursorPages<Item>(
  operation: string,
  readPage: (startAfter: string | undefined) => Promise<CursorPage<Item>>,
  startAfter?: string,
): AsyncGenerator<Item, void, undefined> {
  let cursor = startAfter;
  // A cursor asked with before (the last one, or one before it: A, B, A) would page for ever.
  const asked = new Set<string | undefined>([cursor]);
  for (;;) {
    const page = await readPage(cursor);
    yield* page.items ?? [];
    const next = page.nextStartAfter;
    if (next === undefined || next === '') return;
    if (asked.has(next)) throw new RefDataPagingError(operation, next);
    asked.add(next);
    cursor = next;
  }
}

/** Candidates of a v4 lookup across all pages (`body.startAfter` is the cursor). */
export function iterateLookupMatchesV4(
  client: Pick<RefDataClient, 'lookupBusinessPartnersV4'>,
  input: RequestInput<'lookupBusinessPartnersV4'>,
  options?: CallOptions,
): AsyncGenerator<Schemas['BusinessPartnerLookupMatch']> {
  return walkCursorPages(
    'lookupBusinessPartnersV4',
    async (startAfter) => {
      const page = await client.lookupBusinessPartnersV4({ body: { ...input.body, startAfter } }, options);
      return { items: page.values, nextStartAfter: page.nextStartAfter };
    },
    input.body.startAfter,
  );
}

/** Relations of a business partner across all pages. */
export function iterateBusinessPartnerRelations(
  client: Pick<RefDataClient, 'fetchBusinessPartnerRelationsV3'>,
  input: RequestInput<'fetchBusinessPartnerRelationsV3'>,
  options?: CallOptions,
): AsyncGenerator<Schemas['BusinessPartnerRelation']> {
  return walkCursorPages(
    'fetchBusinessPartnerRelationsV3',
    async (startAfter) => {
      const page = await client.fetchBusinessPartnerRelationsV3(
        { body: { ...input.body, startAfter } },
        options,
      );
      return { items: page.values, nextStartAfter: page.nextStartAfter };
    },
    input.body.startAfter,
  );
}

type ConfigurationListOperation = 'listFetchConfigurations' | 'listLookupConfigurations';

/** Every fetch or lookup configuration, across all list pages. */
export function iterateConfigurations(
  client: Pick<RefDataClient, ConfigurationListOperation>,
  kind: 'fetch' | 'lookup',
  input: RequestInput<'listFetchConfigurations'> = {},
  options?: CallOptions,
): AsyncGenerator<Schemas['WorkspaceConfigurationSearchResult']> {
  const operation: ConfigurationListOperation =
    kind === 'fetch' ? 'listFetchConfigurations' : 'listLookupConfigurations';
  return walkCursorPages(
    operation,
    async (startAfter) => {
      const page = await client[operation]({ query: { ...input.query, startAfter } }, options);
      return { items: page.values, nextStartAfter: page.nextStartAfter };
    },
    input.query?.startAfter,
  );
}

/** Result items of an EXTD lookup job (readable once the job is FINISHED). */
export function iterateExtdLookupJobResults(
  client: Pick<RefDataClient, 'listExtdLookupJobResults'>,
  input: RequestInput<'listExtdLookupJobResults'>,
  options?: CallOptions,
): AsyncGenerator<Schemas['ExtdLookupJobItemResult']> {
  return walkCursorPages(
    'listExtdLookupJobResults',
    async (startAfter) => {
      const page = await client.listExtdLookupJobResults(
        { path: input.path, query: { ...input.query, startAfter } },
        options,
      );
      return { items: page.values, nextStartAfter: page.nextStartAfter };
    },
    input.query?.startAfter,
  );
}

/** Task results of a bulk lookup, across the pages of `GET .../bulks/{id}`. */
export function iterateBulkLookupResults(
  client: Pick<RefDataClient, 'getBulkLookup'>,
  input: RequestInput<'getBulkLookup'>,
  options?: CallOptions,
): AsyncGenerator<Schemas['BulkLookupResult']> {
  return walkCursorPages(
    'getBulkLookup',
    async (startAfter) => {
      const bulk = await client.getBulkLookup(
        { path: input.path, query: { ...input.query, startAfter } },
        options,
      );
      return { items: bulk.results, nextStartAfter: bulk.nextStartAfter };
    },
    input.query?.startAfter,
  );
}
