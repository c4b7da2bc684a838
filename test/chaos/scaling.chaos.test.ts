import { afterAll, describe, expect, it } from 'vitest';
import { expectAcceptance } from './support/acceptance.ts';
import { encodeValid, registerEncoders, validPartners } from './support/input.ts';
import { SANDBOX_ORGS, Scenario } from './support/scenario.ts';

const RECORDS = 8_000;

for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
  describe(`chaos: replicas scaled 1 -> 3 -> 1, the two removed with ${signal}`, () => {
    let scenario: Scenario | undefined;
    afterAll(() => scenario?.close());

    it('loses nothing, pays no task twice from the rebalances, and commits to the end offsets', async () => {
      scenario = await Scenario.start({
        name: `scale-1-3-1-${signal.toLowerCase()}`,
        partitions: 6,
        maxInFlightRecords: 1_000,
      });
      const encoders = await registerEncoders(scenario.registry, scenario.topics.input);
      const partners = validPartners({ count: RECORDS, orgs: SANDBOX_ORGS, seed: 30, prefix: 'sc' });
      await scenario.produce(await encodeValid(partners, encoders.v1));
      const [first] = await scenario.replicas.add(1);
      await scenario.replicas.waitReady([first as string]);
      await scenario.waitForProgress(0.15);
      const added = await scenario.replicas.scaleTo(3);
      // The removal is meant to hit replicas that run and own partitions, not ones still starting.
      expect
        .soft(await scenario.replicas.waitReady(added), 'the two added replicas ready within 60 s')
        .toBe(true);
      await scenario.waitForProgress(0.45);
      await scenario.replicas.scaleTo(1, signal);
      expectAcceptance(await scenario.finish(180_000));
    });
  });
}

describe('chaos: two replicas started at the same moment', () => {
  let scenario: Scenario | undefined;
  afterAll(() => scenario?.close());

  it('both start, share the partitions, lose nothing and pay nothing twice', async () => {
    scenario = await Scenario.start({ name: 'two-at-once', partitions: 6, maxInFlightRecords: 1_000 });
    const encoders = await registerEncoders(scenario.registry, scenario.topics.input);
    const partners = validPartners({ count: 4_000, orgs: SANDBOX_ORGS, seed: 31, prefix: 'tw' });
    await scenario.produce(await encodeValid(partners, encoders.v1));
    const both = await scenario.replicas.add(2);
    expect.soft(await scenario.replicas.waitReady(both), 'both replicas ready within 60 s').toBe(true);
    expectAcceptance(await scenario.finish(180_000));
  });
});
