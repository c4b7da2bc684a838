import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { expectAcceptance } from './support/acceptance.ts';
import { encodeValid, registerEncoders, validPartners } from './support/input.ts';
import { SANDBOX_ORGS, Scenario } from './support/scenario.ts';

const PARTNERS = 1_500;
const ROUNDS = 4;

let scenario: Scenario;
beforeAll(async () => {
  scenario = await Scenario.start({
    name: 'kill-coalescing',
    partitions: 3,
    maxInFlightRecords: 1_000,
    // A short lease: an intent its killed submitter left is adopted after 10 s, not 60 s.
    env: { PARTNER_ENRICH_REFDATA__TIMEOUT_MS: '5000' },
  });
});
afterAll(() => scenario?.close());

/** Round r changes 40 % of the partners (a content never sent before) and re-sends 20 % unchanged. */
function round(latest: PartnerRecord[], r: number): PartnerRecord[] {
  const records: PartnerRecord[] = [];
  latest.forEach((partner, i) => {
    if ((i + r) % 5 < 2) {
      const changed = {
        ...partner,
        taxNumbers: [...partner.taxNumbers.slice(0, 10), { type: 'CHAOS', value: `r${r}` }],
      };
      latest[i] = changed;
      records.push(changed);
    } else if ((i + r) % 5 === 2) records.push({ ...partner, changedAt: Date.now() });
  });
  return records;
}

describe('chaos: the pipeline SIGKILLed three times while changed versions and re-sends stream in', () => {
  it('loses nothing and pays one lookup per content some result needed: coalesced versions share it, re-sends need none', async () => {
    const encoders = await registerEncoders(scenario.registry, scenario.topics.input);
    const latest = validPartners({ count: PARTNERS, orgs: SANDBOX_ORGS, seed: 23, prefix: 'kc' });
    await scenario.produce(await encodeValid([...latest], encoders.v1));
    const [replica] = await scenario.replicas.add(1);
    // Versions arrive while older ones of the same partner are still queued or in flight.
    const production = (async () => {
      for (let r = 1; r <= ROUNDS; r += 1) {
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        await scenario.produce(await encodeValid(round(latest, r), encoders.v1));
      }
    })();
    for (const share of [0.2, 0.45, 0.7]) {
      await scenario.replicas.waitReady([replica as string]);
      await scenario.waitForProgress(share);
      scenario.replicas.signal(replica as string, 'SIGKILL');
    }
    await production;
    const report = await scenario.finish(180_000);
    expectAcceptance(report);
    expect(report.processes.pipelineKills).toBe(3);
    expect(report.lookups.validRecords).toBeGreaterThan(report.lookups.distinctContents);
  });
});
