// Bulk lookup (v4): POST answers at once with the bulk CREATED and the runner works through
// its tasks in the background (RUNNING, progress 0..100, then FINISHED). Results are paged
// once the bulk is FINISHED. In instant mode the bulk is FINISHED in the POST answer.

import type { FastifyInstance } from 'fastify';
import type { Schemas } from '../../refdata/index.ts';
import { isoAt } from '../clock.ts';
import { notFound } from '../errors.ts';
import { offsetOf, offsetPage, pageLimit } from '../http/offset-paging.ts';
import { operationRoute } from '../http/operation-route.ts';
import { resolveLookupParameters } from '../lookup/lookup-parameters.ts';
import type { ResolvedSandboxOptions } from '../options.ts';
import { bulkProgress, type BulkLookupRecord } from '../state/bulk-lookups.ts';
import type { SandboxState } from '../state/sandbox-state.ts';

/** The spec gives no default or maximum results page size; assumed. */
const BULK_RESULTS_PAGE = { default: 100, max: 1000 } as const;

export function registerBulkLookupRoutes(
  app: FastifyInstance,
  state: SandboxState,
  options: Readonly<ResolvedSandboxOptions>,
): void {
  operationRoute(app, 'createBulkLookup', ({ body, principal }) => {
    const { tasks = [], ...members } = body;
    const parameters = resolveLookupParameters('createBulkLookup', members, state.configurations.lookup);
    const bulk = state.bulks.create({
      createdAt: options.clock.now(),
      createdBy: principal,
      parameters,
      tasks,
    });
    state.stats.add('bulkSubmissions');
    state.stats.add('bulkTasks', tasks.length);
    if (options.mode === 'instant') state.bulkRunner.runNow(bulk);
    else state.bulkRunner.enqueue(bulk);
    return bulkView(bulk, 0, BULK_RESULTS_PAGE.default);
  });

  operationRoute(app, 'getBulkLookup', ({ path, query }) => {
    const bulk = state.bulks.get(path.id);
    if (!bulk) throw notFound(`bulk lookup ${path.id}`);
    const limit = pageLimit(query.limit, 'query.limit', BULK_RESULTS_PAGE);
    return bulkView(bulk, offsetOf(query.startAfter, 'query.startAfter'), limit, query.startAfter);
  });
}

function bulkView(
  bulk: BulkLookupRecord,
  offset: number,
  limit: number,
  startAfter?: string,
): Schemas['BulkLookup'] {
  const { parameters } = bulk;
  const finished = bulk.status === 'FINISHED';
  const page = finished ? offsetPage(bulk.results, offset, limit) : { values: [] };
  const view: Schemas['BulkLookup'] = {
    id: bulk.id,
    createdAt: isoAt(bulk.createdAt),
    createdBy: bulk.createdBy,
    status: {
      code: bulk.status,
      technicalKey: bulk.status,
      timestamp: isoAt(bulk.finishedAt ?? bulk.createdAt),
    },
    progress: bulkProgress(bulk),
    limit: parameters.limit,
    dataSources: parameters.dataSources,
    matchingThreshold: parameters.matchingThreshold,
    maxCandidates: parameters.maxCandidates,
    storagesDataSources: parameters.storagesDataSources,
    featuresOn: parameters.featuresOn,
    featuresOff: parameters.featuresOff,
    results: page.values,
  };
  if (bulk.finishedAt !== undefined) view.finishedAt = isoAt(bulk.finishedAt);
  if (parameters.configurationId !== undefined) view.configurationId = parameters.configurationId;
  if (startAfter !== undefined) view.startAfter = startAfter;
  if (page.nextStartAfter !== undefined) view.nextStartAfter = page.nextStartAfter;
  return view;
}
