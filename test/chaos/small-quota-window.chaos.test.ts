import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAcceptance } from './support/acceptance.ts';
import { encodeValid, registerEncoders, validPartners } from './support/input.ts';
import { SANDBOX_ORGS, Scenario } from './support/scenario.ts';
import { setQuota, watchQuotaWindows } from './support/service.ts';

const RECORDS = 5_000;
const QUOTA = 400;
const WINDOW_MS = 4_000;

let scenario: Scenario;
beforeAll(async () => {
  scenario = await Scenario.start({
    name: 'small-quota-window',
    partitions: 4,
    maxInFlightRecords: 2_000,
    // The default bulk size (500): larger than the window.
    env: { PARTNER_ENRICH_BATCHING__MAX_TASKS: '500', PARTNER_ENRICH_BATCHING__LINGER_MS: '200' },
  });
});
afterAll(() => scenario?.close());

describe('chaos: a quota window smaller than a bulk (400 per 4 s, bulks of 500)', () => {
  it('drains 5,000 records using >= 95% of each full window, paying nothing beyond the lookups needed', async () => {
    await setQuota(scenario.sandbox.url, QUOTA, 'PT4S');
    const encoders = await registerEncoders(scenario.registry, scenario.topics.input);
    const partners = validPartners({ count: RECORDS, orgs: SANDBOX_ORGS, seed: 19, prefix: 'qw' });
    await scenario.produce(await encodeValid(partners, encoders.v1));
    const watch = watchQuotaWindows(scenario.sandbox.url, WINDOW_MS);
    let windows: [number, number][];
    try {
      await scenario.replicas.add(1);
      await scenario.waitForProgress(1, 150_000);
    } finally {
      windows = [...(await watch.stop())].filter(([, used]) => used > 0).sort(([a], [b]) => a - b);
    }
    // Full windows: every one between the first and the last that held anything.
    const full = windows.slice(1, -1).map(([, used]) => used);
    scenario.measured.quotaWindowsUsed = windows.map(([, used]) => used);
    const report = await scenario.finish(60_000);
    expectAcceptance(report);
    expect.soft(full.length, 'full quota windows').toBeGreaterThanOrEqual(10);
    expect
      .soft(
        full.filter((used) => used < QUOTA * 0.95),
        'full windows under 95 % used',
      )
      .toEqual([]);
  });
});
