// Free-text search and golden record generation. Search takes one line of text (name and
// address together, as the spec describes it) and leaves the reading of it to the matcher;
// the golden record is the most complete of the records named, by the matcher's measure.

import type { FastifyInstance } from 'fastify';
import type { Schemas } from '../../refdata/index.ts';
import { notFound } from '../errors.ts';
import { operationRoute } from '../http/operation-route.ts';
import { asBadRequest } from '../lookup/matching-errors.ts';
import { mostCompleteRecord } from '../matching/golden-record.ts';
import { subjectFromNormalized } from '../matching/query-shapes.ts';
import type { SandboxState } from '../state/sandbox-state.ts';

/** The spec shows no search page size; assumed. */
const DEFAULT_SEARCH_LIMIT = 10;

export function registerSearchRoutes(app: FastifyInstance, state: SandboxState): void {
  operationRoute(app, 'searchBusinessPartnersV3', ({ body }) => {
    const limit = body.limit ?? DEFAULT_SEARCH_LIMIT;
    const page = asBadRequest(() => state.lookups.search(body.query ?? '', limit), 'body', 'body.query');
    const result: Schemas['SearchResult'] = {
      total: page.total,
      values: page.values.map((candidate) => state.lookups.match(candidate)),
    };
    return result;
  });

  operationRoute(app, 'createGoldenRecordV3', ({ body }) => {
    const records = (body.svcIds ?? []).flatMap((svcId) => {
      const record = state.dataset.getRecord(svcId);
      return record ? [record] : [];
    });
    const chosen =
      records[mostCompleteRecord(records.map((record) => subjectFromNormalized(record.businessPartner)))];
    const golden = chosen && state.lookups.goldenRecordOf(chosen.svcId);
    if (!golden) throw notFound(`none of the business partners ${(body.svcIds ?? []).join(', ')}`);
    return golden;
  });
}
