import { afterAll, beforeAll, describe, it } from 'vitest';
import { expectAcceptance } from './support/acceptance.ts';
import { encodeValid, registerEncoders, validPartners } from './support/input.ts';
import { SANDBOX_ORGS, Scenario } from './support/scenario.ts';

const RECORDS = 6_000;

let scenario: Scenario;
beforeAll(async () => {
  scenario = await Scenario.start({ name: 'pipeline-kill', partitions: 6, maxInFlightRecords: 1_000 });
});
afterAll(() => scenario?.close());

describe('chaos: the pipeline killed with SIGKILL three times in a run', () => {
  it('loses nothing, pays no task twice from rebalances, and commits to the end offsets', async () => {
    const encoders = await registerEncoders(scenario.registry, scenario.topics.input);
    const partners = validPartners({ count: RECORDS, orgs: SANDBOX_ORGS, seed: 11, prefix: 'pk' });
    await scenario.produce(await encodeValid(partners, encoders.v1));
    const [replica] = await scenario.replicas.add(1);
    for (const share of [0.15, 0.4, 0.65]) {
      // Each kill hits a replica that runs (the supervisor restarted the one killed before).
      await scenario.replicas.waitReady([replica as string]);
      await scenario.waitForProgress(share);
      scenario.replicas.signal(replica as string, 'SIGKILL');
    }
    expectAcceptance(await scenario.finish(180_000));
  });
});
