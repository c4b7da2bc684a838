import { describe, expect, it } from 'vitest';
import { createMetrics, RECORD_OUTCOMES } from '../../src/observability/index.ts';
import { PIPELINE_METRIC_NAMES } from './metric-names.ts';

describe('createMetrics', () => {
  it('registers every pipeline metric', async () => {
    const names = (await createMetrics().registry.getMetricsAsJSON()).map((metric) => metric.name);
    expect(names).toEqual(expect.arrayContaining(PIPELINE_METRIC_NAMES));
  });

  it('registers the default Node process metrics', async () => {
    const text = await createMetrics().registry.metrics();
    expect(text).toContain('partner_enrich_process_cpu_seconds_total');
    expect(text).toContain('partner_enrich_nodejs_eventloop_lag_seconds');
  });

  it('prefixes every metric name with partner_enrich_', async () => {
    const names = (await createMetrics().registry.getMetricsAsJSON()).map((metric) => metric.name);
    expect(names.filter((name) => !name.startsWith('partner_enrich_'))).toEqual([]);
  });

  it('starts every known outcome at 0, so that rates exist before the first record', async () => {
    const text = await createMetrics().registry.metrics();
    for (const outcome of RECORD_OUTCOMES)
      expect(text).toContain(`partner_enrich_records_out_total{outcome="${outcome}"} 0`);
  });

  it('gives each instance its own registry, so that counts do not mix', async () => {
    const first = createMetrics();
    const second = createMetrics();
    first.bulkSubmissions.inc();
    expect(await first.registry.getSingleMetricAsString('partner_enrich_bulk_submissions_total')).toContain(
      'partner_enrich_bulk_submissions_total 1',
    );
    expect(await second.registry.getSingleMetricAsString('partner_enrich_bulk_submissions_total')).toContain(
      'partner_enrich_bulk_submissions_total 0',
    );
  });

  it('reports readiness as it is when scraped: 0 until a reader says ready, then what it says', async () => {
    const metrics = createMetrics();
    const ready = () => metrics.registry.getSingleMetricAsString('partner_enrich_ready');
    expect(await ready()).toMatch(/^partner_enrich_ready 0$/m);
    let answer = true;
    metrics.readReady(() => answer);
    expect(await ready()).toMatch(/^partner_enrich_ready 1$/m);
    answer = false;
    expect(await ready()).toMatch(/^partner_enrich_ready 0$/m);
  });
});
