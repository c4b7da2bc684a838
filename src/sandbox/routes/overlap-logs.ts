// Overlap logs of a storage: each partner of the storage together with the other records of
// the same organization (in other data sources) it overlaps. Only storages watched by a data
// monitor have a log (the dataset's mirrors); the others answer an empty page.

import type { FastifyInstance } from 'fastify';
import type { Schemas } from '../../refdata/index.ts';
import { notFound } from '../errors.ts';
import { offsetOf, offsetPage, pageLimit } from '../http/offset-paging.ts';
import { operationRoute } from '../http/operation-route.ts';
import type { SandboxState } from '../state/sandbox-state.ts';

/** The spec shows no paging parameters; assumed. */
const OVERLAP_PAGE = { default: 100, max: 1000 } as const;

export function registerOverlapLogRoutes(app: FastifyInstance, state: SandboxState): void {
  operationRoute(app, 'getOverlapLogResults', ({ path, query }) => {
    const storage = state.storages.get(path.storageId);
    if (!storage) throw notFound(`storage ${path.storageId}`);
    const limit = pageLimit(query.limit, 'query.limit', OVERLAP_PAGE);
    const overlapping = storage.monitored
      ? storage.partners.filter((partner) => partner.organization.svcIds.length > 1)
      : [];
    const page = offsetPage(overlapping, offsetOf(query.startAfter, 'query.startAfter'), limit);
    const answer: Schemas['OverlapLogResultsPage'] = {
      total: overlapping.length,
      values: page.values.map((partner) => ({
        svcId: partner.svcId,
        overlappingSvcIds: partner.organization.svcIds.filter((svcId) => svcId !== partner.svcId),
        // The monitor notices an overlap when the record last changed.
        ...(detectedAtOf(state, partner.svcId) ?? {}),
      })),
    };
    if (query.startAfter !== undefined) answer.startAfter = query.startAfter;
    if (page.nextStartAfter !== undefined) answer.nextStartAfter = page.nextStartAfter;
    return answer;
  });
}

function detectedAtOf(state: SandboxState, svcId: string): { detectedAt: string } | undefined {
  const lastUpdatedAt = state.dataset.getRecord(svcId)?.lastUpdatedAt;
  return lastUpdatedAt === undefined ? undefined : { detectedAt: lastUpdatedAt };
}
