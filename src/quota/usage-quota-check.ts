// The quota gate's check through the service usage API (POST {usage_url}/quotas/consume).
import { RefDataHttpError, parseQuotaReset, type RefDataClient } from '../refdata/index.ts';
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
      // The spec's answers are OK and OVER_LIMIT; anything else (no body, no status, another
      // word) does not say the units were granted, so it is not taken for a grant.
      const status: unknown = (response as { status?: unknown } | undefined)?.status;
      if (status === 'OK' || status === 'OVER_LIMIT') return status;
      throw new RefDataHttpError(
        'REFDATA_INVALID_RESPONSE',
        {
          operation: 'consumeQuota',
          status: 200,
          serviceMessage: `quota check status ${status === undefined ? 'missing' : 'neither OK nor OVER_LIMIT'}`,
        },
        false,
      );
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
