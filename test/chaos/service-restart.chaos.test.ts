import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAcceptance } from './support/acceptance.ts';
import { encodeValid, registerEncoders, validPartners } from './support/input.ts';
import { SANDBOX_ORGS, Scenario } from './support/scenario.ts';

const RECORDS = 3_000;
/** The sandbox is killed at most this long after it created a bulk. */
const JUST_CREATED_MS = 250;

let scenario: Scenario;
beforeAll(async () => {
  scenario = await Scenario.start({ name: 'service-restart', partitions: 4, maxInFlightRecords: 1_000 });
});
afterAll(() => scenario?.close());

describe('chaos: the reference data service SIGKILLed and restarted with bulks in flight', () => {
  it('loses nothing and pays again at most once per task of a bulk the restarted service forgot', async () => {
    const encoders = await registerEncoders(scenario.registry, scenario.topics.input);
    const partners = validPartners({ count: RECORDS, orgs: SANDBOX_ORGS, seed: 17, prefix: 'sr' });
    await scenario.produce(await encodeValid(partners, encoders.v1));
    // Slow answers keep bulks in flight (created, polled, not yet read) when the service dies.
    await scenario.sandbox.setFaults({ latencyMs: 700 });
    const [replica] = await scenario.replicas.add(1);
    await scenario.replicas.waitReady([replica as string]);
    await scenario.waitForProgress(0.2);
    // Killed just after it accepted a bulk: each request waits 700 ms before it is handled, so
    // the pipeline cannot have read that bulk's results yet.
    let beforeKill = await scenario.sandbox.collect();
    const newest = () => Math.max(0, ...beforeKill.bulks.map((b) => b.createdAt));
    for (const deadline = Date.now() + 90_000; Date.now() - newest() > JUST_CREATED_MS;) {
      if (Date.now() > deadline) throw new Error('no bulk created in the last 90 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
      beforeKill = await scenario.sandbox.collect();
    }
    const unfinished = beforeKill.bulks.filter((b) => b.tasks.some((t) => t.status === undefined)).length;
    const sinceNewest = Date.now() - newest();
    await scenario.sandbox.kill('SIGKILL');
    scenario.disrupted('sandbox SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await scenario.sandbox.restart();
    scenario.measured.bulksBeforeKill = beforeKill.bulks.length;
    scenario.measured.unfinishedAtKill = unfinished;
    scenario.measured.msSinceNewestBulkAtKill = sinceNewest;
    const report = await scenario.finish(180_000);
    expectAcceptance(report);
    expect(report.sandbox.restarts).toBe(1);
    // The restart did forget bulks in flight (else the scenario proved nothing); only bulks of
    // the first life can be, each task looked up again at most once (the acceptance above).
    expect.soft(report.lookups.forgotten.bulks, 'bulks the restarted service forgot').toBeGreaterThan(0);
    expect.soft(report.lookups.forgotten.bulks).toBeLessThanOrEqual(beforeKill.bulks.length);
  });
});
