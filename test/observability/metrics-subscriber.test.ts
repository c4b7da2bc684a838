import diagnosticsChannel from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CHANNEL_NAMES,
  createMetrics,
  pipelineEvents,
  subscribeMetrics,
  type Metrics,
} from '../../src/observability/index.ts';

/** The value of one sample; histogram samples are named with their suffix (`_count`, `_sum`). */
async function value(metrics: Metrics, name: string, labels: Record<string, string> = {}) {
  const samples = (await metrics.registry.getMetricsAsJSON()).flatMap((metric) =>
    metric.values.map((sample) => ({
      ...sample,
      name: 'metricName' in sample && typeof sample.metricName === 'string' ? sample.metricName : metric.name,
    })),
  );
  const sample = samples.find(
    (candidate) =>
      candidate.name === name &&
      Object.entries(labels).every(([label, labelValue]) => String(candidate.labels[label]) === labelValue),
  );
  return sample?.value;
}

let unsubscribe: (() => void) | undefined;
afterEach(() => unsubscribe?.());

function subscribed(): Metrics {
  const metrics = createMetrics();
  unsubscribe = subscribeMetrics(metrics);
  return metrics;
}

describe('subscribeMetrics', () => {
  it('counts records in, out by outcome and dead letters by reason', async () => {
    const metrics = subscribed();
    pipelineEvents.records.publish({ type: 'in', source: 'kafka', count: 500 });
    pipelineEvents.records.publish({ type: 'out', outcome: 'MATCH', count: 480 });
    pipelineEvents.records.publish({ type: 'dead-letter', reason: 'MAPPING_INVALID_COUNTRY', count: 20 });
    expect(await value(metrics, 'partner_enrich_records_in_total', { source: 'kafka' })).toBe(500);
    expect(await value(metrics, 'partner_enrich_records_out_total', { outcome: 'MATCH' })).toBe(480);
    expect(
      await value(metrics, 'partner_enrich_dead_letters_total', { reason: 'MAPPING_INVALID_COUNTRY' }),
    ).toBe(20);
  });

  it('counts records adopted from a dead submitter, by whether their quota was consumed before', async () => {
    const metrics = subscribed();
    pipelineEvents.records.publish({ type: 'adopted', paid: true, count: 120 });
    pipelineEvents.records.publish({ type: 'adopted', paid: false, count: 14 });
    pipelineEvents.records.publish({ type: 'adopted', paid: true, count: 80 });
    expect(await value(metrics, 'partner_enrich_records_adopted_total', { paid: 'true' })).toBe(200);
    expect(await value(metrics, 'partner_enrich_records_adopted_total', { paid: 'false' })).toBe(14);
  });

  it('tracks bulk submissions, tasks in flight and the latency of completed bulks', async () => {
    const metrics = subscribed();
    pipelineEvents.bulk.publish({ type: 'submitted', bulkId: 'b-1', tasks: 500 });
    pipelineEvents.bulk.publish({ type: 'submitted', bulkId: 'b-2', tasks: 300 });
    expect(await value(metrics, 'partner_enrich_tasks_in_flight')).toBe(800);
    pipelineEvents.bulk.publish({ type: 'completed', bulkId: 'b-1', tasks: 500, seconds: 2 });
    pipelineEvents.bulk.publish({
      type: 'failed',
      bulkId: 'b-2',
      tasks: 300,
      seconds: 1,
      code: 'REFDATA_TIMEOUT',
    });
    expect(await value(metrics, 'partner_enrich_bulk_submissions_total')).toBe(2);
    expect(await value(metrics, 'partner_enrich_tasks_in_flight')).toBe(0);
    expect(await value(metrics, 'partner_enrich_bulk_latency_seconds_count')).toBe(1);
    expect(await value(metrics, 'partner_enrich_bulk_latency_seconds_sum')).toBe(2);
  });

  it('counts quota consumed in tasks and OVER_LIMIT answers', async () => {
    const metrics = subscribed();
    pipelineEvents.quota.publish({ type: 'consumed', tasks: 500 });
    pipelineEvents.quota.publish({ type: 'over-limit' });
    expect(await value(metrics, 'partner_enrich_quota_consumed_total')).toBe(500);
    expect(await value(metrics, 'partner_enrich_quota_over_limit_total')).toBe(1);
  });

  it("counts a rerun's partners by result and its quota, and shows each running share's progress until it is done", async () => {
    const metrics = subscribed();
    const chunk = { type: 'chunk', jobId: 'nightly', partition: 2, total: 1_000 } as const;
    const results = { changed: 30, unchanged: 460, failed: 2, superseded: 8 };
    pipelineEvents.rerun.publish({ ...chunk, results, read: 500, done: false });
    pipelineEvents.rerun.publish({ type: 'quota', tasks: 492 });
    expect(await value(metrics, 'partner_enrich_rerun_partners_total', { result: 'changed' })).toBe(30);
    expect(await value(metrics, 'partner_enrich_rerun_partners_total', { result: 'superseded' })).toBe(8);
    expect(await value(metrics, 'partner_enrich_rerun_quota_consumed_total')).toBe(492);
    const share = { rerun: 'nightly', partition: '2' };
    expect(await value(metrics, 'partner_enrich_rerun_progress_ratio', share)).toBe(0.5);
    pipelineEvents.rerun.publish({ ...chunk, results, read: 1_000, done: true });
    expect(await value(metrics, 'partner_enrich_rerun_partners_total', { result: 'unchanged' })).toBe(920);
    expect(await value(metrics, 'partner_enrich_rerun_progress_ratio', share)).toBeUndefined();
  });

  it('shows intake paused while any reason holds it, counting each pause once', async () => {
    const metrics = subscribed();
    pipelineEvents.intake.publish({ type: 'paused', reason: 'quota' });
    pipelineEvents.intake.publish({ type: 'paused', reason: 'quota' });
    pipelineEvents.intake.publish({ type: 'paused', reason: 'backpressure' });
    pipelineEvents.intake.publish({ type: 'resumed', reason: 'quota' });
    expect(await value(metrics, 'partner_enrich_intake_paused')).toBe(1);
    pipelineEvents.intake.publish({ type: 'resumed', reason: 'backpressure' });
    expect(await value(metrics, 'partner_enrich_intake_paused')).toBe(0);
    expect(await value(metrics, 'partner_enrich_intake_pauses_total', { reason: 'quota' })).toBe(1);
    expect(await value(metrics, 'partner_enrich_intake_pauses_total', { reason: 'backpressure' })).toBe(1);
  });

  it('counts HTTP requests by operation and status, retries by reason, and sets consumer lag', async () => {
    const metrics = subscribed();
    pipelineEvents.http.publish({ operation: 'submitBulk', status: 202, seconds: 0.1 });
    pipelineEvents.http.publish({ operation: 'submitBulk', status: 'error', seconds: 30 });
    pipelineEvents.retry.publish({ operation: 'submitBulk', reason: 'REFDATA_TIMEOUT', attempt: 2 });
    pipelineEvents.lag.publish({ topic: 'partners', partition: 3, lag: 1200 });
    expect(
      await value(metrics, 'partner_enrich_http_requests_total', { operation: 'submitBulk', status: '202' }),
    ).toBe(1);
    expect(await value(metrics, 'partner_enrich_http_requests_total', { status: 'error' })).toBe(1);
    expect(await value(metrics, 'partner_enrich_retries_total', { reason: 'REFDATA_TIMEOUT' })).toBe(1);
    expect(await value(metrics, 'partner_enrich_consumer_lag', { topic: 'partners', partition: '3' })).toBe(
      1200,
    );
  });

  it('regression: drops the consumer lag series when the lag could not be read (its last figure stood, read by the autoscaler as current)', async () => {
    const metrics = subscribed();
    pipelineEvents.lag.publish({ topic: 'partners', partition: 3, lag: 1200 });
    pipelineEvents.lag.publish({ topic: 'partners', unknown: true });
    expect(await value(metrics, 'partner_enrich_consumer_lag', { partition: '3' })).toBeUndefined();
    pipelineEvents.lag.publish({ topic: 'partners', partition: 3, lag: 900 });
    expect(await value(metrics, 'partner_enrich_consumer_lag', { partition: '3' })).toBe(900);
  });

  it('ignores a negative count instead of throwing from a channel subscriber', async () => {
    const metrics = subscribed();
    pipelineEvents.records.publish({ type: 'in', source: 'file', count: -5 });
    expect(await value(metrics, 'partner_enrich_records_in_total', { source: 'file' })).toBe(0);
  });

  it('stops counting once unsubscribed', async () => {
    const metrics = subscribed();
    unsubscribe?.();
    unsubscribe = undefined;
    pipelineEvents.quota.publish({ type: 'over-limit' });
    expect(await value(metrics, 'partner_enrich_quota_over_limit_total')).toBe(0);
    expect(pipelineEvents.quota.hasSubscribers).toBe(false);
  });
});

describe('pipeline channels', () => {
  it('are plain diagnostics channels under the partner-enrich: namespace', () => {
    const received: unknown[] = [];
    const listener = (message: unknown) => received.push(message);
    diagnosticsChannel.subscribe(CHANNEL_NAMES.bulk, listener);
    pipelineEvents.bulk.publish({ type: 'submitted', bulkId: 'b-9', tasks: 1 });
    diagnosticsChannel.unsubscribe(CHANNEL_NAMES.bulk, listener);
    expect(received).toEqual([{ type: 'submitted', bulkId: 'b-9', tasks: 1 }]);
    for (const name of Object.values(CHANNEL_NAMES)) expect(name).toMatch(/^partner-enrich:[a-z-]+$/);
  });
});
