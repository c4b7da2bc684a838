import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { expectAcceptance } from './support/acceptance.ts';
import { encodeValid, registerEncoders, validPartners } from './support/input.ts';
import { SANDBOX_ORGS, Scenario } from './support/scenario.ts';

const RECORDS = 4_000;
const DOWN_SECONDS = 10;

// A three-node cluster as production runs it (replication factor 3, min.insync.replicas 2):
// partition leaders, the group coordinator, the transaction coordinators and the KRaft
// controller move to the nodes left each time one crashes.
describe.each([
  { delivery: 'at-least-once', name: 'broker-failover', seed: 41, prefix: 'bf' },
  { delivery: 'exactly-once', name: 'broker-failover-exactly-once', seed: 43, prefix: 'bfe' },
])('chaos: $delivery, each node of a three-broker cluster killed with SIGKILL in turn', (mode) => {
  let scenario: Scenario | undefined;
  afterAll(() => scenario?.close());

  // OPEN DEFECT, both delivery modes: records of one input partition lost while the group's
  // commits passed them, their tasks paid. At-least-once: 1 of 6 runs, 100 records (5:264...);
  // exactly-once: 1 of 4 runs, in CI at e354364, 64 records (5:600...), with nothing seen twice.
  // Not yet explained (docs/GUARANTEES.md). Skipped, and reported as skipped, until it is: run it
  // with `it` for `it.skip` to reproduce (CHAOS_KEEP_LOGS=true CHAOS_LOG_LEVEL=debug).
  it.skip('rides through every failover: loses nothing, pays nothing twice, commits to the end offsets', async () => {
    scenario = await Scenario.start({
      name: mode.name,
      brokers: 3,
      partitions: 6,
      maxInFlightRecords: 1_000,
      env: { PARTNER_ENRICH_DELIVERY: mode.delivery },
    });
    const encoders = await registerEncoders(scenario.registry, scenario.topics.input);
    const partners = validPartners({
      count: RECORDS,
      orgs: SANDBOX_ORGS,
      seed: mode.seed,
      prefix: mode.prefix,
    });
    await scenario.produce(await encodeValid(partners, encoders.v1));
    await scenario.replicas.add(1);
    for (const [i, share] of [0.2, 0.45, 0.7].entries()) {
      await scenario.waitForProgress(share);
      const node = scenario.brokers[i] as (typeof scenario.brokers)[number];
      await scenario.killBroker(node);
      await sleep(DOWN_SECONDS * 1000);
      await node.restart();
    }
    const report = await scenario.finish(180_000);
    expectAcceptance(report);
    // Two nodes of three always run: a failover is the client's to ride through, not a
    // reason for the process to exit and be restarted.
    expect(report.processes.selfExits, 'replica exits of its own').toEqual([]);
    if (mode.delivery === 'exactly-once')
      expect
        .soft(report.duplicates.positions, 'records whose outputs a read-committed consumer sees twice')
        .toBe(0);
  });
});
