// Fetch by platform id: v3 (status string, message, mappedRecord), v3 batch, and v4 (status
// object). An unknown or malformed svcId is not an HTTP error: the result says INVALID_INPUT,
// as the spec's per-record status does. With configurationId, the fetch configuration's
// screeningMatchingThreshold and features apply under the request's (override rule).

import type { FastifyInstance } from 'fastify';
import type { Schemas } from '../../refdata/index.ts';
import { isoAt } from '../clock.ts';
import type { FetchFeature, FetchSettings } from '../directory/fetch-results.ts';
import { invalidRequest } from '../errors.ts';
import { operationRoute } from '../http/operation-route.ts';
import { applyConfiguration, requireConfiguration } from '../lookup/configuration-override.ts';
import type { ResolvedSandboxOptions } from '../options.ts';
import type { SandboxState } from '../state/sandbox-state.ts';

interface FetchMembers {
  featuresOn?: FetchFeature[] | undefined;
  featuresOff?: FetchFeature[] | undefined;
  screeningMatchingThreshold?: number | undefined;
  configurationId?: string | undefined;
}

export function registerFetchRoutes(
  app: FastifyInstance,
  state: SandboxState,
  options: Readonly<ResolvedSandboxOptions>,
): void {
  const settingsOf = (request: FetchMembers & Record<string, unknown>): FetchSettings => {
    let merged: FetchMembers = request;
    if (request.configurationId !== undefined) {
      const found = requireConfiguration(
        state.configurations.fetch.get(request.configurationId),
        request.configurationId,
      );
      merged = applyConfiguration(merged, found.configuration, ['screeningMatchingThreshold']);
    }
    const off = new Set(merged.featuresOff ?? []);
    return {
      features: new Set((merged.featuresOn ?? []).filter((feature) => !off.has(feature))),
      screeningMatchingThreshold: merged.screeningMatchingThreshold,
      request,
    };
  };

  const fetchV3 = (
    svcId: string | undefined,
    settings: FetchSettings,
    erpMapping: boolean,
  ): Schemas['FetchResultV3'] => {
    const record = state.fetchResults.find(svcId);
    if (typeof record === 'string') {
      return { ...(svcId === undefined ? {} : { svcId }), status: 'INVALID_INPUT', message: record };
    }
    const result: Schemas['FetchResultV3'] = {
      ...state.fetchResults.common(record, settings),
      status: 'OK',
      message: 'OK',
    };
    if (erpMapping) result.mappedRecord = { ...record.businessPartner.formattedErpRecord };
    return result;
  };

  operationRoute(app, 'fetchBusinessPartnerV3', ({ body }) =>
    fetchV3(body.svcId, settingsOf(body), body.outboundMapping === 'ERP'),
  );

  operationRoute(app, 'fetchBusinessPartnersBatchV3', ({ body }) => {
    const settings = settingsOf(body);
    return (body.svcIds ?? []).map((svcId) => fetchV3(svcId, settings, false));
  });

  operationRoute(app, 'fetchBusinessPartnerV4', ({ body }) => {
    const svcId = body.svcId ?? state.lookups.bestMatchOf(body.businessPartner);
    if (svcId === undefined)
      throw invalidRequest('body.svcId', 'svcId or a businessPartner that matches is required');
    const settings = settingsOf(body);
    const record = state.fetchResults.find(svcId);
    const timestamp = isoAt(options.clock.now());
    if (typeof record === 'string') {
      return {
        svcId,
        status: { code: 'INVALID_INPUT', technicalKey: 'INVALID_INPUT', details: [record], timestamp },
      };
    }
    return {
      ...state.fetchResults.common(record, settings),
      status: { code: 'OK', technicalKey: 'OK', timestamp },
    };
  });
}
