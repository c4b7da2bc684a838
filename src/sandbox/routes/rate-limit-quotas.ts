// Identity API: upsert and read rate-limit quotas. Every X-Credential-Username belongs to the
// sandbox's one organization; the `system` scope is for the configured administrators only
// (a regular user gets 400, as the spec says). Parameter names of the read are the
// document's (the spec does not show them).

import type { FastifyInstance } from 'fastify';
import { QUOTA_RESET_FORMS, parseQuotaReset, type Schemas } from '../../refdata/index.ts';
import { dataSourceById } from '../dataset/data-sources.ts';
import { SandboxHttpError, invalidRequest } from '../errors.ts';
import { operationRoute } from '../http/operation-route.ts';
import type { ResolvedSandboxOptions } from '../options.ts';
import { quotaStatus, type QuotaScope, type RateLimitQuota } from '../state/quota-ledger.ts';
import type { SandboxState } from '../state/sandbox-state.ts';

type QuotaReadFeature = Schemas['QuotaReadFeature'];

const DEFAULT_READ_FEATURES: readonly QuotaReadFeature[] = ['FETCH_QUOTA_USAGE'];
/** The spec does not show a default page size; assumed. */
const DEFAULT_PAGE_SIZE = 20;

export function registerRateLimitQuotaRoutes(
  app: FastifyInstance,
  state: SandboxState,
  options: Readonly<ResolvedSandboxOptions>,
): void {
  const scopeOf = (scope: string | undefined, username: string | undefined): QuotaScope => {
    if (scope === undefined) return 'organization';
    if (username === undefined || !options.administrators.includes(username)) {
      throw invalidRequest('query.scope', 'the system scope is for administrators only; leave scope empty');
    }
    return 'system';
  };
  const checkOrganization = (
    organizationId: string | undefined,
    scope: QuotaScope,
    field: string,
  ): string => {
    if (organizationId === undefined || organizationId === options.organizationId || scope === 'system') {
      return organizationId ?? options.organizationId;
    }
    throw new SandboxHttpError(
      403,
      'FORBIDDEN',
      `organization ${organizationId} is not the user's organization`,
      {
        field,
      },
    );
  };

  operationRoute(app, 'upsertRateLimitQuotas', ({ query, body, username }) => {
    const scope = scopeOf(query.scope, username);
    const quotas = (body.quotas ?? []).map((item, index): RateLimitQuota => {
      const field = `body.quotas[${index}]`;
      const serviceKey = item.service?.technicalKey;
      if (serviceKey === undefined)
        throw invalidRequest(`${field}.service.technicalKey`, 'the service is required');
      if (item.maxAmount === undefined || item.maxAmount < 0) {
        throw invalidRequest(`${field}.maxAmount`, 'maxAmount is required and must be >= 0', 0);
      }
      const resetMs = item.reset === undefined ? undefined : parseQuotaReset(item.reset);
      if (item.reset === undefined || resetMs === undefined) {
        throw invalidRequest(`${field}.reset`, `reset must be ${QUOTA_RESET_FORMS}`, QUOTA_RESET_FORMS);
      }
      return {
        scope,
        serviceKey,
        organizationId: checkOrganization(item.organization?.id, scope, `${field}.organization.id`),
        workspaceId: item.workspace?.id,
        maxAmount: item.maxAmount,
        reset: item.reset,
        resetMs,
      };
    });
    for (const quota of quotas) state.quotas.upsert(quota);
    return { numberOfUpserted: quotas.length };
  });

  operationRoute(app, 'listRateLimitQuotas', ({ query, username }) => {
    const scope = scopeOf(query.scope, username);
    const organizationId = checkOrganization(query.organizationId, scope, 'query.organizationId');
    const off = new Set(query.featuresOff ?? []);
    const features = new Set(
      [...DEFAULT_READ_FEATURES, ...(query.featuresOn ?? [])].filter((f) => !off.has(f)),
    );
    const requireFeature = (feature: QuotaReadFeature, given: unknown, field: string): void => {
      if (given !== undefined && !features.has(feature))
        throw invalidRequest(field, `${field} needs ${feature}`);
    };
    requireFeature(
      'FETCH_QUOTA_USAGE',
      features.has('DERIVE_STATUSES') ? true : undefined,
      'query.featuresOn',
    );
    requireFeature('FETCH_SERVICE_DETAILS', query.serviceName, 'query.serviceName');
    requireFeature('FETCH_SERVICE_DETAILS', query.supportedCountries, 'query.supportedCountries');
    requireFeature('DERIVE_STATUSES', query.expectedStatuses, 'query.expectedStatuses');

    const serviceKeys = new Set(query.serviceTechnicalKeys ?? []);
    const withWorkspaces = features.has('FETCH_WORKSPACE_QUOTAS') || query.workspaceId !== undefined;
    const values = state.quotas
      .quotas(scope)
      .filter(
        (quota) =>
          (scope === 'system' || quota.organizationId === organizationId) &&
          (serviceKeys.size === 0 || serviceKeys.has(quota.serviceKey)) &&
          (quota.workspaceId === undefined ? query.workspaceId === undefined : withWorkspaces) &&
          (query.workspaceId === undefined || quota.workspaceId === query.workspaceId),
      )
      .map((quota) => listValue(quota, state.quotas.usedOf(quota), features))
      .filter((value) => matchesDetails(value, query));

    const page = query.page ?? 0;
    const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
    return {
      page,
      pageSize,
      total: values.length,
      values: values.slice(page * pageSize, (page + 1) * pageSize),
    };
  });
}

type QuotaListValue = Schemas['QuotaListValue'] & { service: { supportedCountries?: string[] } };

function listValue(
  quota: RateLimitQuota,
  used: number,
  features: ReadonlySet<QuotaReadFeature>,
): QuotaListValue {
  const value: QuotaListValue = {
    service: { technicalKey: quota.serviceKey },
    organization: { id: quota.organizationId },
    maxAmount: quota.maxAmount,
    reset: quota.reset,
  };
  if (quota.workspaceId !== undefined) {
    value.workspace = { id: quota.workspaceId };
    if (features.has('FETCH_WORKSPACE_NAME')) value.workspace.name = `Workspace ${quota.workspaceId}`;
  }
  if (features.has('FETCH_SERVICE_DETAILS')) {
    const source = dataSourceById(quota.serviceKey);
    value.service.name = source?.name ?? quota.serviceKey;
    value.service.supportedCountries = [...(source?.countries ?? [])];
  }
  if (features.has('FETCH_QUOTA_USAGE')) {
    value.usedQuota = used;
    if (features.has('DERIVE_STATUSES')) value.statuses = [quotaStatus(quota, used)];
  }
  return value;
}

function matchesDetails(
  value: QuotaListValue,
  query: { serviceName?: string; supportedCountries?: string[]; expectedStatuses?: Schemas['QuotaStatus'][] },
): boolean {
  const { name, supportedCountries = [] } = value.service;
  if (query.serviceName !== undefined && !name?.toLowerCase().includes(query.serviceName.toLowerCase()))
    return false;
  // A service without a country list covers every country.
  const countries = query.supportedCountries ?? [];
  if (supportedCountries.length > 0 && countries.some((country) => !supportedCountries.includes(country)))
    return false;
  const statuses = query.expectedStatuses;
  return statuses === undefined || (value.statuses ?? []).some((status) => statuses.includes(status));
}
