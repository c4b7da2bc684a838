// v4 lookup: one cursor page of candidates, with the lookup configuration's values under the
// request's (override rule) and the document's defaults under both.

import type { FastifyInstance } from 'fastify';
import type { Schemas } from '../../refdata/index.ts';
import { operationRoute } from '../http/operation-route.ts';
import { resolveLookupParameters } from '../lookup/lookup-parameters.ts';
import { asBadRequest } from '../lookup/matching-errors.ts';
import { subjectFromBusinessPartnerParam } from '../matching/query-shapes.ts';
import type { SandboxState } from '../state/sandbox-state.ts';

export function registerLookupV4Routes(app: FastifyInstance, state: SandboxState): void {
  operationRoute(app, 'lookupBusinessPartnersV4', ({ body }) => {
    const { businessPartner = {}, ...members } = body;
    const parameters = resolveLookupParameters(
      'lookupBusinessPartnersV4',
      members,
      state.configurations.lookup,
    );
    const outcome = asBadRequest(() =>
      state.lookups.lookup(subjectFromBusinessPartnerParam(businessPartner), parameters),
    );
    const page: Schemas['LookupResultPageV4'] = {
      total: outcome.page.total,
      limit: outcome.page.limit,
      values: outcome.values,
      annotations: outcome.annotations,
    };
    if (parameters.startAfter !== undefined) page.startAfter = parameters.startAfter;
    if (outcome.page.nextStartAfter !== undefined) page.nextStartAfter = outcome.page.nextStartAfter;
    if (outcome.goldenRecord) page.goldenRecord = outcome.goldenRecord;
    return page;
  });
}
