// The bulk runner's view of the reference data client (v4 bulk lookup create and read).
import type { RefDataClient, Schemas } from '../refdata/index.ts';
import type { BulkLookupApi, BulkPage, BulkTaskResult } from './bulk-api.ts';
import { BulkError } from './errors.ts';

type BulkLookup = Schemas['BulkLookup'];
type BulkLookupResult = Schemas['BulkLookupResult'];

/** Business partner members' inner fields are not shown in the spec; names[].value is the v3 shape. */
function firstName(partner: Schemas['BusinessPartner'] | undefined): string | undefined {
  const value = partner?.names?.[0]?.value;
  return typeof value === 'string' ? value : undefined;
}

/**
 * The candidates per task the service returns (the spec's default, sent explicitly so that a
 * service default changing cannot grow every result page and MatchResult).
 */
const CANDIDATES_PER_TASK = 10;

/**
 * What the outputs carry of a task's result, taken as the page is read: the candidates'
 * identity, score, source and name, and the golden record's business partner as the JSON text
 * the MatchResult holds. Nothing else of the page (whole business partners of every candidate)
 * outlives it.
 */
const taskResult = (result: BulkLookupResult): BulkTaskResult => ({
  taskId: result.taskId,
  status: result.status?.code ?? 'OK',
  ...(result.status?.details?.length ? { message: JSON.stringify(result.status.details) } : {}),
  candidates: (result.values ?? []).map((match) => {
    const name = firstName(match.businessPartner);
    return {
      svcId: match.svcId ?? '',
      score: match.score ?? 0,
      ...(match.dataSource?.aleiPrefix ? { dataSource: match.dataSource.aleiPrefix } : {}),
      ...(name === undefined ? {} : { name }),
    };
  }),
  ...(result.goldenRecord?.svcId
    ? {
        goldenRecord: {
          svcId: result.goldenRecord.svcId,
          json: JSON.stringify(result.goldenRecord.businessPartner ?? {}),
        },
      }
    : {}),
});

const page = (bulk: BulkLookup): BulkPage => ({
  id: bulk.id ?? '',
  status: bulk.status?.code ?? 'RUNNING',
  progress: bulk.progress ?? 0,
  results: (bulk.results ?? []).map(taskResult),
  ...(bulk.nextStartAfter ? { nextStartAfter: bulk.nextStartAfter } : {}),
  ...(bulk.status?.details?.length ? { message: JSON.stringify(bulk.status.details) } : {}),
});

export function refDataBulkApi(client: RefDataClient): BulkLookupApi {
  return {
    async createBulk(tasks, parameters) {
      const bulk = await client.createBulkLookup({
        body: {
          ...parameters,
          featuresOn: parameters.featuresOn as Schemas['LookupFeature'][],
          featuresOff: parameters.featuresOff as Schemas['LookupFeature'][],
          // In a bulk, `limit` caps the candidates per task (as in a v4 lookup); result pages
          // are sized on read.
          limit: CANDIDATES_PER_TASK,
          tasks: tasks.map((task) => ({ id: task.id, businessPartner: { jsonRecord: task.jsonRecord } })),
        },
      });
      if (!bulk.id) throw new BulkError('BULK_CREATED_WITHOUT_ID', 'bulk lookup created without an id');
      return { id: bulk.id };
    },
    async readBulk(id, { limit, startAfter }) {
      return page(
        await client.getBulkLookup({ path: { id }, query: { limit, ...(startAfter ? { startAfter } : {}) } }),
      );
    },
  };
}
