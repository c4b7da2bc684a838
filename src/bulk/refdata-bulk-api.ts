// The bulk runner's view of the reference data client (v4 bulk lookup create and read).
import type { RefDataClient, Schemas } from '../refdata/index.ts';
import type { BulkLookupApi } from './bulk-api.ts';
import { readBulkPage } from './bulk-page-reader.ts';
import { BulkError } from './errors.ts';

/**
 * The candidates per task the service returns (the spec's default, sent explicitly so that a
 * service default changing cannot grow every result page and MatchResult).
 */
const CANDIDATES_PER_TASK = 10;

export function refDataBulkApi(client: RefDataClient): BulkLookupApi {
  return {
    async createBulk(tasks, parameters, timeoutMs) {
      const bulk = await client.createBulkLookup(
        {
          body: {
            ...parameters,
            featuresOn: parameters.featuresOn as Schemas['LookupFeature'][],
            featuresOff: parameters.featuresOff as Schemas['LookupFeature'][],
            // In a bulk, `limit` caps the candidates per task (as in a v4 lookup); result pages
            // are sized on read.
            limit: CANDIDATES_PER_TASK,
            tasks: tasks.map((task) => ({ id: task.id, businessPartner: { jsonRecord: task.jsonRecord } })),
          },
        },
        timeoutMs === undefined ? {} : { timeoutMs },
      );
      // An empty 200 body parses to undefined: no id either.
      if (!bulk?.id) throw new BulkError('BULK_CREATED_WITHOUT_ID', 'bulk lookup created without an id');
      return { id: bulk.id };
    },
    readBulk(id, { limit, startAfter }) {
      return client.readBulkLookup(readBulkPage, {
        path: { id },
        query: { limit, ...(startAfter ? { startAfter } : {}) },
      });
    },
  };
}
