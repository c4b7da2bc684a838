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

  // Records of one input partition were lost here now and then, in both delivery modes (at-least-once
  // 1 run of 6: 100 records; exactly-once 1 of 4: 64), their positions committed: kafkajs left
  // a partition out of a send's retry when its leader had moved to a broker that answered the
  // send's other partitions (kafka/leader-move-send.integration.test.ts proves the fix).
  it('rides through every failover: loses nothing, pays nothing twice, commits to the end offsets', async () => {
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
