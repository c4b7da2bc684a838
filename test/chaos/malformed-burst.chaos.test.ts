import { afterAll, describe, it } from 'vitest';
import { expectAcceptance } from './support/acceptance.ts';
import {
  encodeValid,
  malformedRecords,
  oversizeRecords,
  registerEncoders,
  validPartners,
} from './support/input.ts';
import { SANDBOX_ORGS, Scenario } from './support/scenario.ts';

/** The input and dead-letter topics take what upstream may send; the other outputs keep the broker's 1 MB. */
const LARGE_TOPIC = [{ name: 'max.message.bytes', value: String(8 << 20) }];
const OVERSIZE_BYTES = 1_200_000;

describe('chaos: a burst of malformed and oversize records', () => {
  let scenario: Scenario | undefined;
  afterAll(() => scenario?.close());

  it('dead-letters the malformed ones, does not let the oversize ones block their partitions, loses nothing', async () => {
    scenario = await Scenario.start({
      name: 'malformed-oversize-burst',
      partitions: 3,
      maxInFlightRecords: 1_000,
      topicConfigs: { input: LARGE_TOPIC, deadLetters: LARGE_TOPIC },
    });
    const encoders = await registerEncoders(scenario.registry, scenario.topics.input);
    const partners = validPartners({ count: 4_006, orgs: SANDBOX_ORGS, seed: 50, prefix: 'mf' });
    const [template] = partners;
    if (!template) throw new Error('no partners');
    await scenario.replicas.add(1);
    await scenario.produce(await encodeValid(partners.slice(0, 2_000), encoders.v1));
    await scenario.produce([
      ...(await malformedRecords(300, template, encoders.v1)),
      ...(await oversizeRecords(partners.slice(4_000), OVERSIZE_BYTES, encoders.v1)),
    ]);
    await scenario.produce(await encodeValid(partners.slice(2_000, 4_000), encoders.v1));
    const report = await scenario.finish(180_000);
    expectAcceptance(report);
    // An oversize record is dead-lettered before its lookup: its outputs could never be written.
  });
});
