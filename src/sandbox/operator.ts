// The sandbox as its operator sees it: the project's own client with the sandbox's
// client credentials, for what tests, benchmarks and demos set up through the identity API.
import { RefDataClient } from '../refdata/index.ts';
import { SANDBOX_DEFAULTS } from './defaults.ts';

/** A client of the sandbox at `url` for the identity and usage APIs, signed in as its operator. */
export const sandboxOperator = (url: string): RefDataClient =>
  new RefDataClient({
    roots: { identity: url, auth: url, usage: url },
    credentials: {
      clientCredentials: { clientId: SANDBOX_DEFAULTS.clientId, clientSecret: SANDBOX_DEFAULTS.clientSecret },
      credentialUsername: 'operator',
    },
  });

/** Sets the default organization's bulk lookup quota: `maxAmount` tasks per `reset` (ISO 8601, e.g. PT4S). */
export async function setOrganizationQuota(url: string, maxAmount: number, reset: string): Promise<void> {
  await sandboxOperator(url).upsertRateLimitQuotas({
    body: {
      quotas: [
        {
          service: { technicalKey: 'REFDATA_BULK_LOOKUP' },
          organization: { id: SANDBOX_DEFAULTS.organizationId },
          maxAmount,
          reset,
        },
      ],
    },
  });
}
