import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, it } from 'vitest';
import { expectAcceptance } from './support/acceptance.ts';
import { encodeValid, registerEncoders, validPartners } from './support/input.ts';
import { SANDBOX_ORGS, Scenario } from './support/scenario.ts';

const AWAY_MS = 60_000;

describe('chaos: the schema registry away for 60 s', () => {
  let scenario: Scenario | undefined;
  afterAll(() => scenario?.close());

  it('waits for it (records of a new writer schema, a replica restarted meanwhile) and loses nothing', async () => {
    scenario = await Scenario.start({ name: 'registry-away-60s', partitions: 3, maxInFlightRecords: 1_000 });
    const encoders = await registerEncoders(scenario.registry, scenario.topics.input);
    const partners = validPartners({ count: 4_000, orgs: SANDBOX_ORGS, seed: 40, prefix: 'rg' });
    await scenario.produce(await encodeValid(partners.slice(0, 2_000), encoders.v1));
    const [replica] = await scenario.replicas.add(1);
    await scenario.waitForProgress(0.3);
    scenario.proxy.away();
    scenario.disrupted('registry away');
    // A writer schema id the replica has not seen: decoding it needs the registry. The
    // producer reaches the registry directly, as an upstream system in another network would.
    await scenario.produce(await encodeValid(partners.slice(2_000), encoders.v2));
    await sleep(5_000);
    // A replica that starts while the registry is away (its encoders register at start).
    scenario.replicas.signal(replica as string, 'SIGKILL');
    await sleep(AWAY_MS - 5_000);
    scenario.proxy.back();
    expectAcceptance(await scenario.finish(180_000));
  });
});
