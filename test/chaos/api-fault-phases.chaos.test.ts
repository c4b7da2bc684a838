import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultSettingsInput } from '../../src/sandbox/index.ts';
import { expectAcceptance } from './support/acceptance.ts';
import { encodeValid, registerEncoders, validPartners } from './support/input.ts';
import { SANDBOX_ORGS, Scenario } from './support/scenario.ts';
import { sandboxStats } from './support/service.ts';

const REQUESTS_PER_SECOND = 8;
const UPFRONT = 1_000;
const STREAMED = 3_000;
const PHASES: { name: string; faults: FaultSettingsInput; seconds: number }[] = [
  { name: '100% 503', faults: { errorRate: 1 }, seconds: 15 },
  { name: '50% 429 Retry-After 1 s', faults: { throttleRate: 0.5, retryAfterSeconds: 1 }, seconds: 15 },
  { name: '+2 s latency', faults: { latencyMs: 2_000 }, seconds: 10 },
  { name: '10% FAILED tasks', faults: { taskFailureRate: 0.1 }, seconds: 15 },
  { name: '30% connection resets', faults: { resetRate: 0.3 }, seconds: 10 },
];
const OFF: FaultSettingsInput = {
  errorRate: 0,
  throttleRate: 0,
  latencyMs: 0,
  taskFailureRate: 0,
  resetRate: 0,
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sent = (stats: Awaited<ReturnType<typeof sandboxStats>>) =>
  Object.values(stats.requestsByOperation).reduce((sum, n) => sum + n, 0);

let scenario: Scenario;
beforeAll(async () => {
  scenario = await Scenario.start({
    name: 'api-fault-phases',
    partitions: 4,
    maxInFlightRecords: 1_000,
    env: { PARTNER_ENRICH_RATE_LIMIT__REQUESTS_PER_SECOND: String(REQUESTS_PER_SECOND) },
  });
});
afterAll(() => scenario?.close());

describe('chaos: API faults in phases (503, 429 with Retry-After, latency, FAILED tasks, resets)', () => {
  it('loses nothing, dead-letters no valid record, pays nothing beyond the lookups needed and retries', async () => {
    const encoders = await registerEncoders(scenario.registry, scenario.topics.input);
    const partners = validPartners({ count: UPFRONT + STREAMED, orgs: SANDBOX_ORGS, seed: 13, prefix: 'af' });
    await scenario.produce(await encodeValid(partners.slice(0, UPFRONT), encoders.v1));
    const [replica] = await scenario.replicas.add(1);
    await scenario.replicas.waitReady([replica as string]);

    // Records keep arriving through every phase, so each phase meets work to do.
    const phasesSeconds = PHASES.reduce((sum, p) => sum + p.seconds, 0);
    const perSecond = Math.ceil(STREAMED / phasesSeconds);
    const streaming = (async () => {
      for (let i = UPFRONT; i < partners.length; i += perSecond) {
        await scenario.produce(await encodeValid(partners.slice(i, i + perSecond), encoders.v1));
        await sleep(1_000);
      }
    })();

    const phases: Record<string, unknown>[] = [];
    for (const phase of PHASES) {
      await scenario.sandbox.setFaults({ ...OFF, ...phase.faults });
      const before = await sandboxStats(scenario.sandbox.url);
      const started = Date.now();
      await sleep(phase.seconds * 1_000);
      const after = await sandboxStats(scenario.sandbox.url);
      const seconds = (Date.now() - started) / 1_000;
      const requests = sent(after) - sent(before);
      const refused = (['injectedThrottles', 'injectedServerErrors', 'injectedResets'] as const).reduce(
        (sum, counter) => sum + after[counter] - before[counter],
        0,
      );
      phases.push({
        phase: phase.name,
        seconds: Math.round(seconds),
        requestsPerSecond: +(requests / seconds).toFixed(2),
        answeredPerSecond: +((requests - refused) / seconds).toFixed(2),
        bulkTasks: after.bulkTasks - before.bulkTasks,
      });
    }
    await scenario.sandbox.setFaults(OFF);
    await streaming;
    scenario.measured.phases = phases;

    // Under 50% 429s with Retry-After 1 s, half of what is sent at the configured rate is
    // answered: that is what the Retry-After allows.
    const throttled = phases[1] as { answeredPerSecond: number };
    const allowed = REQUESTS_PER_SECOND * 0.5;
    scenario.measured.throughputUnder429 = {
      answeredPerSecond: throttled.answeredPerSecond,
      allowedPerSecond: allowed,
      ratio: +(throttled.answeredPerSecond / allowed).toFixed(2),
    };

    const report = await scenario.finish(180_000);
    expectAcceptance(report);
    expect.soft(report.sandbox.injected.resets, 'connection resets injected').toBeGreaterThan(0);
    expect
      .soft(
        throttled.answeredPerSecond / allowed,
        'answered requests under 50% 429s / what Retry-After allows',
      )
      .toBeGreaterThanOrEqual(0.5);
  });
});
