import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, it } from 'vitest';
import { expectAcceptance } from './support/acceptance.ts';
import { encodeValid, registerEncoders, validPartners } from './support/input.ts';
import { SANDBOX_ORGS, Scenario } from './support/scenario.ts';

const RECORDS = 4_000;

for (const downSeconds of [15, 45]) {
  describe(`chaos: the broker killed with SIGKILL, ${downSeconds} s down, restarted on the same data`, () => {
    let scenario: Scenario | undefined;
    afterAll(() => scenario?.close());

    it('loses nothing and commits to the end offsets once the broker is back', async () => {
      scenario = await Scenario.start({
        name: `broker-down-${downSeconds}s`,
        partitions: 3,
        maxInFlightRecords: 1_000,
      });
      const encoders = await registerEncoders(scenario.registry, scenario.topics.input);
      const partners = validPartners({
        count: RECORDS,
        orgs: SANDBOX_ORGS,
        seed: 20 + downSeconds,
        prefix: 'bk',
      });
      await scenario.produce(await encodeValid(partners, encoders.v1));
      await scenario.replicas.add(1);
      await scenario.waitForProgress(0.3);
      await scenario.killBroker();
      await sleep(downSeconds * 1000);
      await scenario.broker.restart();
      expectAcceptance(await scenario.finish(180_000));
    });
  });
}
