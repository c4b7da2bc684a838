import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAcceptance } from './support/acceptance.ts';
import { encodeValid, registerEncoders, validPartners } from './support/input.ts';
import { SANDBOX_ORGS, Scenario } from './support/scenario.ts';

describe.each([
  { delivery: 'at-least-once', name: 'pipeline-kill', records: 6_000, seed: 11, prefix: 'pk' },
  { delivery: 'exactly-once', name: 'pipeline-kill-exactly-once', records: 4_000, seed: 17, prefix: 'eo' },
])('chaos: $delivery, the pipeline killed with SIGKILL three times in a run', (mode) => {
  let scenario: Scenario;
  beforeAll(async () => {
    scenario = await Scenario.start({
      name: mode.name,
      partitions: 6,
      maxInFlightRecords: 1_000,
      env: { PARTNER_ENRICH_DELIVERY: mode.delivery },
    });
  });
  afterAll(() => scenario?.close());

  it('loses nothing, pays no task twice from rebalances, and commits to the end offsets', async () => {
    const encoders = await registerEncoders(scenario.registry, scenario.topics.input);
    const partners = validPartners({
      count: mode.records,
      orgs: SANDBOX_ORGS,
      seed: mode.seed,
      prefix: mode.prefix,
    });
    await scenario.produce(await encodeValid(partners, encoders.v1));
    const [replica] = await scenario.replicas.add(1);
    for (const share of [0.15, 0.4, 0.65]) {
      // Each kill hits a replica that runs (the supervisor restarted the one killed before).
      await scenario.replicas.waitReady([replica as string]);
      await scenario.waitForProgress(share);
      scenario.replicas.signal(replica as string, 'SIGKILL');
    }
    const report = await scenario.finish(180_000);
    expectAcceptance(report);
    // Exactly-once: what a killed replica wrote and did not commit was aborted, so a
    // read-committed consumer (as the reconciliation is) sees each record's outputs once,
    // where at-least-once may repeat them after a kill.
    if (mode.delivery === 'exactly-once')
      expect
        .soft(report.duplicates.positions, 'records whose outputs a read-committed consumer sees twice')
        .toBe(0);
  });
});
