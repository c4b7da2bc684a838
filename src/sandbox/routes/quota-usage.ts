// Service usage API: read usage, and check-and-consume. A consume that does not fit in what is
// left of the window answers OVER_LIMIT and consumes nothing; `quotaAmount` -1 (jobs) only
// checks that some quota is left. The forced OVER_LIMIT fault refuses every consume.

import type { FastifyInstance } from 'fastify';
import { documentDefaults, withDefaults } from '../http/document-defaults.ts';
import { operationRoute } from '../http/operation-route.ts';
import type { ResolvedSandboxOptions } from '../options.ts';
import { quotaStatus } from '../state/quota-ledger.ts';
import type { SandboxState } from '../state/sandbox-state.ts';

export function registerQuotaUsageRoutes(
  app: FastifyInstance,
  state: SandboxState,
  options: Readonly<ResolvedSandboxOptions>,
): void {
  operationRoute(app, 'getQuotaUsage', ({ body }) => ({
    values: (body.values ?? []).map((item) => {
      const { quota, used } = state.quotas.use({
        serviceKey: item.service.technicalKey,
        organizationId: item.organization.id,
        workspaceId: item.workspace?.id,
      });
      return {
        service: item.service,
        organization: { id: item.organization.id },
        ...(item.workspace?.id === undefined ? {} : { workspace: { id: item.workspace.id } }),
        ...(quota === undefined ? {} : { reset: quota.reset, maxAmount: quota.maxAmount }),
        usedQuota: used,
        status: quotaStatus(quota, used),
      };
    }),
  }));

  operationRoute(app, 'consumeQuota', ({ body }) => {
    const request = withDefaults(body, documentDefaults('consumeQuota').body);
    const amount = request.quotaAmount ?? 1;
    state.stats.add('quotaConsumeRequests');
    const status = state.faults.overLimit
      ? 'OVER_LIMIT'
      : state.quotas.consume(
          {
            serviceKey: request.service?.technicalKey ?? '',
            organizationId: request.apiKeyCredentials?.organizationId ?? options.organizationId,
            workspaceId: request.apiKeyCredentials?.workspaceId,
          },
          amount,
        );
    if (status === 'OVER_LIMIT') state.stats.add('quotaOverLimit');
    else if (amount === -1) state.stats.add('quotaJobUnits');
    else state.stats.add('quotaConsumed', amount);
    return { status };
  });
}
