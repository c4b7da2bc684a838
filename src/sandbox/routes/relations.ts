// Relations of a business partner (ownership links between the dataset's organizations), with
// the spec's filters: ended/started after/before compare with the relation's endedAt or
// startedAt (a relation that has not ended never passes an ended filter), and class and type keys.

import type { FastifyInstance } from 'fastify';
import type { Schemas } from '../../refdata/index.ts';
import type { PartnerRelation } from '../dataset/relations.ts';
import { invalidRequest, notFound } from '../errors.ts';
import { offsetOf, offsetPage, pageLimit } from '../http/offset-paging.ts';
import { operationRoute } from '../http/operation-route.ts';
import type { SandboxState } from '../state/sandbox-state.ts';

/** The spec gives no default or maximum page size; assumed. */
const RELATIONS_PAGE = { default: 100, max: 1000 } as const;

type RelationsRequest = Partial<Schemas['FetchRelationsRequest']>;

export function registerRelationRoutes(app: FastifyInstance, state: SandboxState): void {
  operationRoute(app, 'fetchBusinessPartnerRelationsV3', ({ body }) => {
    if (body.svcId === undefined) throw invalidRequest('body.svcId', 'body.svcId is required');
    const relations = state.dataset.relationsOf(body.svcId);
    if (!relations) throw notFound(`business partner ${body.svcId}`);
    const limit = pageLimit(body.limit, 'body.limit', RELATIONS_PAGE);
    const matching = relations.filter(relationFilter(body));
    const page = offsetPage(matching, offsetOf(body.startAfter, 'body.startAfter'), limit);
    const answer: Schemas['RelationsPage'] = {
      limit,
      total: matching.length,
      values: page.values.map((relation) => ({ ...relation })),
    };
    if (page.nextStartAfter !== undefined) answer.nextStartAfter = page.nextStartAfter;
    return answer;
  });
}

function relationFilter(request: RelationsRequest): (relation: PartnerRelation) => boolean {
  const time = (field: keyof RelationsRequest): number | undefined => {
    const value = request[field];
    if (value === undefined) return undefined;
    const parsed = Date.parse(String(value));
    if (Number.isNaN(parsed))
      throw invalidRequest(`body.${field}`, `body.${field} must be an ISO 8601 date-time`);
    return parsed;
  };
  const bounds = {
    endedAfter: time('endedAfter'),
    endedBefore: time('endedBefore'),
    startedAfter: time('startedAfter'),
    startedBefore: time('startedBefore'),
  };
  return (relation) => {
    const started = Date.parse(relation.startedAt);
    const ended = relation.endedAt === undefined ? undefined : Date.parse(relation.endedAt);
    const endedFilter = bounds.endedAfter !== undefined || bounds.endedBefore !== undefined;
    if (endedFilter && ended === undefined) return false;
    if (ended !== undefined && bounds.endedAfter !== undefined && !(ended > bounds.endedAfter)) return false;
    if (ended !== undefined && bounds.endedBefore !== undefined && !(ended < bounds.endedBefore))
      return false;
    if (bounds.startedAfter !== undefined && !(started > bounds.startedAfter)) return false;
    if (bounds.startedBefore !== undefined && !(started < bounds.startedBefore)) return false;
    if (request.classTechnicalKey !== undefined && relation.classTechnicalKey !== request.classTechnicalKey)
      return false;
    return request.typeTechnicalKey === undefined || relation.typeTechnicalKey === request.typeTechnicalKey;
  };
}
