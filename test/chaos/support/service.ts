// The sandbox process seen from a scenario over HTTP, as an operator and an observer would
// see the real service: its counters, the organization's bulk lookup quota set through the
// identity API, and that quota's usage in the current window.
import {
  SANDBOX_DEFAULTS,
  sandboxOperator,
  setOrganizationQuota,
  type SandboxStatsSnapshot,
} from '../../../src/sandbox/index.ts';

const QUOTA = {
  service: { technicalKey: 'REFDATA_BULK_LOOKUP' },
  organization: { id: SANDBOX_DEFAULTS.organizationId },
};

export async function sandboxStats(url: string): Promise<SandboxStatsSnapshot> {
  const response = await fetch(`${url}/admin/stats`);
  if (!response.ok) throw new Error(`sandbox stats: ${response.status}`);
  return (await response.json()) as SandboxStatsSnapshot;
}

/** Sets the organization's bulk lookup quota through the identity API. */
export const setQuota = setOrganizationQuota;

/** Samples the quota used in the current window every `everyMs`; stop() gives the last sample per window. */
export function watchQuotaWindows(
  url: string,
  windowMs: number,
  everyMs = 25,
): { stop(): Promise<Map<number, number>> } {
  const client = sandboxOperator(url);
  const used = new Map<number, number>();
  let running = true;
  const loop = (async () => {
    while (running) {
      const window = Math.floor(Date.now() / windowMs);
      const { values } = await client.getQuotaUsage({ body: { values: [QUOTA] } });
      const value = values?.[0]?.usedQuota;
      // A sample taken across the window's end belongs to neither: the reset may be in it.
      if (typeof value === 'number' && Math.floor(Date.now() / windowMs) === window) used.set(window, value);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return used;
    },
  };
}
