// The pipeline under a tight quota, under injected faults, and across a restart: nothing
// is lost, nothing is dead-lettered for lack of quota, no bulk is paid for twice.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createKafkaEnrichment, type Enrichment } from '../../src/cli/enrichment.ts';
import { logObserver } from '../../src/cli/log-observer.ts';
import type { Config } from '../../src/config/index.ts';
import { createLogger, createMetrics, subscribeMetrics } from '../../src/observability/index.ts';
import { eventObserver } from '../../src/pipeline/event-observer.ts';
import { combineObservers, type PipelineObserver } from '../../src/pipeline/ports.ts';
import { RunSummary } from '../../src/pipeline/run-summary.ts';
import { SANDBOX_DEFAULTS, setOrganizationQuota } from '../../src/sandbox/index.ts';
import { committedAndEndOffsets, readAll, testConfig, waitForFinished } from '../support/enrichment.ts';
import { eventually } from '../support/kafka.ts';
import { matchResults, scenario } from '../support/scenario.ts';

async function runToEnd(
  config: Config,
  summary: RunSummary,
  total: number,
  observer: PipelineObserver = summary,
): Promise<Enrichment> {
  const enrichment = await createKafkaEnrichment(config, observer);
  await enrichment.pipeline.start();
  await waitForFinished(() => summary.finished, total);
  await enrichment.stop(10_000);
  return enrichment;
}

describe('partner-enrich run under pressure', () => {
  it('pauses intake on OVER_LIMIT and completes every record within a few-hundred-task quota window', async () => {
    const s = await scenario('quota', 1_500);
    await setOrganizationQuota(s.sandbox.url, 300, 'PT2S');
    const config = testConfig(s.sandbox.url, s.topics, { batching: { maxTasks: 100 } });
    const summary = new RunSummary();
    const metrics = createMetrics();
    const unsubscribe = subscribeMetrics(metrics);
    const logLines: string[] = [];
    const logger = createLogger({
      level: 'info',
      destination: new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) }),
    });
    await runToEnd(
      config,
      summary,
      s.partners.length,
      combineObservers(summary, eventObserver('kafka'), logObserver(logger)),
    );
    unsubscribe();

    const results = await matchResults(s);
    expect(results).toHaveLength(s.partners.length);
    expect(results.filter((r) => r.outcome === 'FAILED')).toEqual([]);
    expect(await readAll(s.kafka, s.topics.deadLetters)).toHaveLength(0);
    const stats = s.sandbox.state.stats.snapshot();
    expect(stats.quotaOverLimit).toBeGreaterThan(0);
    expect(stats.quotaConsumed).toBe(s.partners.length);
    expect(summary.pauses.get('quota')).toBeGreaterThan(0);
    const exposition = await metrics.registry.metrics();
    expect(exposition).toMatch(/partner_enrich_quota_over_limit_total [1-9]/);
    expect(exposition).toMatch(/partner_enrich_intake_pauses_total\{reason="quota"\} [1-9]/);
    expect(logLines.some((line) => line.includes('quota over limit: intake paused'))).toBe(true);
  });

  it('regression: a quota window smaller than a bulk (400 per 4 s, bulks of 500) drains 5,000 records using >= 95% of each full window', async () => {
    const s = await scenario('small-window', 5_000);
    await setOrganizationQuota(s.sandbox.url, 400, 'PT4S');
    const config = testConfig(s.sandbox.url, s.topics, { batching: { maxTasks: 500, lingerMs: 200 } });
    // What each window of the sandbox's quota held when it closed (windows are aligned to the clock).
    const usedByWindow = new Map<number, number>();
    const quota = () =>
      s.sandbox.state.quotas.applicable({
        serviceKey: 'REFDATA_BULK_LOOKUP',
        organizationId: SANDBOX_DEFAULTS.organizationId,
      });
    const watch = setInterval(() => {
      const current = quota();
      if (current) usedByWindow.set(Math.floor(Date.now() / 4_000), s.sandbox.state.quotas.usedOf(current));
    }, 10);
    try {
      await runToEnd(config, new RunSummary(), s.partners.length);
    } finally {
      clearInterval(watch);
    }

    const results = await matchResults(s);
    expect(results).toHaveLength(s.partners.length);
    expect(new Set(results.map((r) => r.partnerId))).toEqual(new Set(s.partners.map((p) => p.partnerId)));
    expect(results.filter((r) => r.outcome === 'FAILED')).toEqual([]);
    // Full windows: every one between the first and the last that held anything.
    const windows = [...usedByWindow].filter(([, used]) => used > 0).sort(([a], [b]) => a - b);
    const full = windows.slice(1, -1).map(([, used]) => used);
    expect(full.length).toBeGreaterThanOrEqual(8);
    expect(
      full.filter((used) => used < 380),
      JSON.stringify(full),
    ).toEqual([]);
  }, 180_000);

  it('with 5% 5xx, 5% 429 and 2% FAILED tasks injected, every record ends as a result or a dead letter', async () => {
    const s = await scenario('faults', 2_000, {
      faults: { errorRate: 0.05, throttleRate: 0.05, retryAfterSeconds: 1, taskFailureRate: 0.02 },
    });
    // Bulks of 50: at least 120 requests (a consume, a create and a poll each; 213 measured), so
    // that 10 % of them faulted is never none. Bulks of 200 made 30 at the least (66 measured):
    // about one run in 25 could draw no fault, and CI once did, the scenario untested.
    const config = testConfig(s.sandbox.url, s.topics, {
      batching: { maxTasks: 50 },
      retry: { maxAttempts: 3, initialDelayMs: 50, maxDelayMs: 500 },
    });
    const summary = new RunSummary();
    await runToEnd(config, summary, s.partners.length);

    const results = await matchResults(s);
    const failed = results.filter((r) => r.outcome === 'FAILED');
    const deadLetters = await readAll(s.kafka, s.topics.deadLetters);
    expect(new Set(results.map((r) => r.partnerId))).toEqual(new Set(s.partners.map((p) => p.partnerId)));
    expect(deadLetters).toHaveLength(failed.length);
    expect(deadLetters.every((m) => m.headers?.['pe.stage']?.toString() === 'lookup')).toBe(true);
    const stats = s.sandbox.state.stats.snapshot();
    expect(stats.injectedServerErrors + stats.injectedThrottles).toBeGreaterThan(0);
    expect(stats.failedBulkTasks).toBeGreaterThan(0);
    expect(summary.retries).toBeGreaterThan(0);
    const { committed, end } = await committedAndEndOffsets(s.kafka, config.kafka.groupId, s.topics.input);
    expect(committed).toEqual(end);
  });

  it('stopped mid-run and started again, loses no record and submits no bulk twice', async () => {
    const s = await scenario('restart', 3_000, { faults: { latencyMs: 300 } });
    const config = testConfig(s.sandbox.url, s.topics, {
      batching: { maxTasks: 250, maxConcurrentBulks: 4 },
    });

    const first = new RunSummary();
    const interrupted = await createKafkaEnrichment(config, first);
    await interrupted.pipeline.start();
    await eventually(
      () => s.sandbox.state.stats.snapshot().bulkSubmissions >= 4,
      60_000,
      'four bulks submitted',
    );
    await interrupted.stop(0);
    const tasksBeforeRestart = s.sandbox.state.stats.snapshot().bulkTasks;
    // Bulks were in flight when it stopped: submitted tasks whose records were not committed.
    const { committed: committedBefore } = await committedAndEndOffsets(
      s.kafka,
      config.kafka.groupId,
      s.topics.input,
    );
    const recordsCommitted = Object.values(committedBefore).reduce(
      (sum, offset) => sum + Math.max(0, Number(offset)),
      0,
    );
    expect(recordsCommitted).toBeLessThan(tasksBeforeRestart);

    const second = new RunSummary();
    const resumed = await createKafkaEnrichment(config, second);
    await resumed.pipeline.start();
    const deadline = Date.now() + 120_000;
    for (;;) {
      const { committed, end } = await committedAndEndOffsets(s.kafka, config.kafka.groupId, s.topics.input);
      if (JSON.stringify(committed) === JSON.stringify(end)) break;
      if (Date.now() > deadline) throw new Error('the restarted run did not reach the end of the input');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await resumed.stop(10_000);

    const stats = s.sandbox.state.stats.snapshot();
    expect(stats.bulkTasks).toBe(s.partners.length);
    expect(stats.quotaConsumed).toBe(s.partners.length);
    expect(second.tasksSubmitted).toBe(s.partners.length - tasksBeforeRestart);
    const results = await matchResults(s);
    expect(new Set(results.map((r) => r.partnerId))).toEqual(new Set(s.partners.map((p) => p.partnerId)));
  });
});
