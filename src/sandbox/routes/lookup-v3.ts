// v3 lookups: the GET form (query parameters, page/pageSize, `totals`) and the POST form
// (body, page/pageSize or limit/startAfter). v3's default maxCandidates (10) is below the
// matcher's smallest candidate set (20), so v3 ranks 20 or more and keeps the best maxCandidates.

import type { FastifyInstance } from 'fastify';
import type { Schemas } from '../../refdata/index.ts';
import { documentDefaults, withDefaults } from '../http/document-defaults.ts';
import { operationRoute } from '../http/operation-route.ts';
import type { LookupParameters } from '../lookup/lookup-parameters.ts';
import { asBadRequest } from '../lookup/matching-errors.ts';
import { chooseGoldenRecord } from '../matching/golden-record.ts';
import type { MatchCandidate } from '../matching/matcher.ts';
import { encodeCursor, pageOf } from '../matching/paging.ts';
import { subjectFromBusinessPartnerParam, subjectFromNormalized } from '../matching/query-shapes.ts';
import type { MatchSubject } from '../matching/subject.ts';
import type { SandboxState } from '../state/sandbox-state.ts';

const SMALLEST_CANDIDATE_SET = 20;

interface V3Paging {
  page: number;
  pageSize: number;
  limit?: number | undefined;
  startAfter?: string | undefined;
}

interface V3Outcome {
  total: number;
  values: Schemas['BusinessPartnerLookupMatch'][];
  nextStartAfter?: string | undefined;
  goldenRecord?: Schemas['GoldenRecord'];
  annotations: Schemas['Annotation'][];
}

export function registerLookupV3Routes(app: FastifyInstance, state: SandboxState): void {
  const v3Defaults = documentDefaults('lookupBusinessPartnersV3').body;

  const lookupV3 = (subject: MatchSubject, parameters: LookupParameters, paging: V3Paging): V3Outcome => {
    const ranked = asBadRequest(() =>
      state.lookups
        .rank(subject, {
          ...parameters,
          maxCandidates: Math.max(SMALLEST_CANDIDATE_SET, parameters.maxCandidates),
        })
        .slice(0, parameters.maxCandidates),
    );
    const { values, nextStartAfter } = asBadRequest(() => pageV3(ranked, paging));
    const golden = chooseGoldenRecord(ranked);
    const outcome: V3Outcome = {
      total: ranked.length,
      values: values.map((candidate) => state.lookups.match(candidate)),
      nextStartAfter,
      annotations: [state.lookups.classification(ranked[0], subject, parameters)],
    };
    if (golden) outcome.goldenRecord = state.lookups.goldenRecord(golden);
    return outcome;
  };

  operationRoute(app, 'lookupBusinessPartnersSimpleV3', ({ query }) => {
    // The GET form has no paging or matching parameters: the POST form's defaults apply.
    const defaults = withDefaults<Partial<Schemas['LookupRequestV3']>>({}, v3Defaults);
    const paging: V3Paging = { page: defaults.page ?? 0, pageSize: defaults.pageSize ?? 0 };
    const subject = subjectFromNormalized({
      names: query.name === undefined ? [] : [{ value: query.name }],
      identifiers:
        query.identifier === undefined
          ? []
          : [{ value: query.identifier, type: { technicalKey: query.identifierType ?? '' } }],
      addresses: [
        {
          thoroughfares: query.thoroughfare === undefined ? [] : [{ value: query.thoroughfare }],
          localities: query.locality === undefined ? [] : [{ value: query.locality }],
          postCodes: query.postCode === undefined ? [] : [{ value: query.postCode }],
          country: { shortName: query.country ?? '' },
        },
      ],
    });
    const outcome = lookupV3(subject, v3Parameters(defaults), paging);
    const page: Schemas['LookupResultPageV3Get'] = {
      totals: outcome.total,
      limit: paging.pageSize,
      pageSize: paging.pageSize,
      page: paging.page,
      values: outcome.values,
      annotations: outcome.annotations,
    };
    if (outcome.goldenRecord) page.goldenRecord = outcome.goldenRecord;
    return page;
  });

  operationRoute(app, 'lookupBusinessPartnersV3', ({ body }) => {
    const request = withDefaults(body, v3Defaults);
    const paging: V3Paging = {
      page: request.page ?? 0,
      pageSize: request.pageSize ?? 0,
      limit: request.limit,
      startAfter: request.startAfter,
    };
    const outcome = lookupV3(
      subjectFromBusinessPartnerParam(request.businessPartner ?? {}),
      v3Parameters(request),
      paging,
    );
    const page: Schemas['LookupResultPageV3Post'] = {
      total: outcome.total,
      limit: paging.limit ?? paging.pageSize,
      pageSize: paging.pageSize,
      page: paging.page,
      values: outcome.values,
      annotations: outcome.annotations,
    };
    if (paging.startAfter !== undefined) page.startAfter = paging.startAfter;
    if (outcome.nextStartAfter !== undefined) page.nextStartAfter = outcome.nextStartAfter;
    if (outcome.goldenRecord) page.goldenRecord = outcome.goldenRecord;
    return page;
  });
}

function v3Parameters(request: Partial<Schemas['LookupRequestV3']>): LookupParameters {
  return {
    limit: request.limit ?? request.pageSize ?? 0,
    dataSources: request.dataSources ?? [],
    matchingThreshold: request.matchingThreshold ?? 0,
    maxCandidates: request.maxCandidates ?? 0,
    storagesDataSources: request.storagesDataSources ?? [],
    featuresOn: request.featuresOn ?? [],
    featuresOff: [],
    matchingClassifications: request.matchingClassifications ?? [],
  };
}

/** limit/startAfter when either is given (cursor paging); otherwise page/pageSize. */
function pageV3(
  ranked: MatchCandidate[],
  paging: V3Paging,
): { values: MatchCandidate[]; nextStartAfter?: string } {
  if (paging.limit !== undefined || paging.startAfter !== undefined) {
    const { values, nextStartAfter } = pageOf(ranked, paging.limit ?? paging.pageSize, paging.startAfter);
    return nextStartAfter === undefined ? { values: [...values] } : { values: [...values], nextStartAfter };
  }
  const start = paging.page * paging.pageSize;
  const values = ranked.slice(start, start + paging.pageSize);
  const last = values.at(-1);
  return start + values.length < ranked.length && last
    ? { values, nextStartAfter: encodeCursor(last) }
    : { values };
}
