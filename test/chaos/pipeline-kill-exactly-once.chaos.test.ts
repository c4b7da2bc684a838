import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAcceptance } from './support/acceptance.ts';
import { encodeValid, registerEncoders, validPartners } from './support/input.ts';
import { SANDBOX_ORGS, Scenario } from './support/scenario.ts';

const RECORDS = 4_000;

let scenario: Scenario;
beforeAll(async () => {
  scenario = await Scenario.start({
    name: 'pipeline-kill-exactly-once',
    partitions: 6,
    maxInFlightRecords: 1_000,
    env: { PARTNER_ENRICH_DELIVERY: 'exactly-once' },
  });
});
afterAll(() => scenario?.close());

describe('chaos: exactly-once delivery, the pipeline killed with SIGKILL three times in a run', () => {
  it('read committed, every record has its outputs once: nothing lost, nothing written twice, no task paid twice from the kills', async () => {
    const encoders = await registerEncoders(scenario.registry, scenario.topics.input);
    const partners = validPartners({ count: RECORDS, orgs: SANDBOX_ORGS, seed: 17, prefix: 'eo' });
    await scenario.produce(await encodeValid(partners, encoders.v1));
    const [replica] = await scenario.replicas.add(1);
    for (const share of [0.15, 0.4, 0.65]) {
      await scenario.replicas.waitReady([replica as string]);
      await scenario.waitForProgress(share);
      scenario.replicas.signal(replica as string, 'SIGKILL');
    }
    const report = await scenario.finish(180_000);
    expectAcceptance(report);
    // What a killed replica wrote and did not commit was aborted: a read-committed consumer
    // sees each record's outputs once, where at-least-once may repeat them after a kill.
    expect
      .soft(report.duplicates.positions, 'records whose outputs a read-committed consumer sees twice')
      .toBe(0);
  });
});
