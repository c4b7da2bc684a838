// The quota gate's check through the service usage API (POST {usage_url}/quotas/consume).
import { parseQuotaReset, type RefDataClient } from '../refdata/index.ts';
import type { QuotaCheck } from './quota-gate.ts';

export interface QuotaIdentity {
  serviceTechnicalKey: string;
  organizationId: string;
  workspaceId?: string;
  preferredUsername?: string;
}

export function usageQuotaCheck(client: RefDataClient, identity: QuotaIdentity): Required<QuotaCheck> {
  return {
    async consume(amount) {
      const response = await client.consumeQuota({
        body: {
          service: { technicalKey: identity.serviceTechnicalKey },
          apiKeyCredentials: {
            organizationId: identity.organizationId,
            ...(identity.workspaceId ? { workspaceId: identity.workspaceId } : {}),
            ...(identity.preferredUsername ? { preferredUsername: identity.preferredUsername } : {}),
          },
          quotaAmount: amount,
        },
      });
      return response.status === 'OVER_LIMIT' ? 'OVER_LIMIT' : 'OK';
    },
    async room() {
      const { values } = await client.getQuotaUsage({
        body: {
          values: [
            {
              service: { technicalKey: identity.serviceTechnicalKey },
              organization: { id: identity.organizationId },
              ...(identity.workspaceId ? { workspace: { id: identity.workspaceId } } : {}),
            },
          ],
        },
      });
      // The usage result's fields are not in the published API: read them where they are.
      const usage = values?.[0];
      if (typeof usage?.maxAmount !== 'number' || typeof usage.usedQuota !== 'number') return undefined;
      const windowMs = typeof usage.reset === 'string' ? parseQuotaReset(usage.reset) : undefined;
      return {
        max: usage.maxAmount,
        left: Math.max(0, usage.maxAmount - usage.usedQuota),
        ...(windowMs === undefined ? {} : { windowMs }),
      };
    },
  };
}
