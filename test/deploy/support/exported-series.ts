// The series a Prometheus scrape of the pipeline's /metrics yields, read from the pipeline's
// own registry (its exposition text, as Prometheus reads it): what a dashboard or an alert
// may name, so that a metric renamed in the code fails their checks.
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createMetrics, METRIC_PREFIX } from '../../../src/observability/index.ts';

/** How a series may be queried: counters through rate() and increase(), gauges as they are. */
export type SeriesKind = 'counter' | 'gauge';

export interface Series {
  kind: SeriesKind;
  /** The metric it belongs to: `x_bucket`, `x_sum` and `x_count` belong to the histogram `x`. */
  metric: string;
}

// The sample names each metric type is exposed as in the Prometheus text format.
const SAMPLES: Record<string, [suffix: string, kind: SeriesKind][]> = {
  counter: [['', 'counter']],
  gauge: [['', 'gauge']],
  histogram: [
    ['_bucket', 'counter'],
    ['_sum', 'counter'],
    ['_count', 'counter'],
  ],
  summary: [
    ['', 'gauge'],
    ['_sum', 'counter'],
    ['_count', 'counter'],
  ],
};

/** Every series name the pipeline exports, default process metrics included. */
export async function pipelineSeries(): Promise<Map<string, Series>> {
  const exposition = await createMetrics().registry.metrics();
  const series = new Map<string, Series>();
  for (const [, metric = '', type = ''] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const samples = SAMPLES[type];
    if (!samples) throw new Error(`${metric} is of a type the checks do not know: ${type}`);
    for (const [suffix, kind] of samples) series.set(metric + suffix, { kind, metric });
  }
  return series;
}

/**
 * Series from outside the pipeline that the dashboard and the alerts use, with who exports
 * them. Kept to what cannot come from the pipeline itself: whether a target answers.
 */
export const EXTERNAL_SERIES: ReadonlyMap<string, Series & { exporter: string }> = new Map([
  ['up', { kind: 'gauge', metric: 'up', exporter: 'Prometheus, per scrape target' }],
]);

/** What the dashboard and the alerts may name: the pipeline's series and the external ones. */
export async function queryableSeries(): Promise<Map<string, Series>> {
  return new Map([...(await pipelineSeries()), ...EXTERNAL_SERIES]);
}

/** The metrics the pipeline registers itself, without prom-client's default process metrics. */
export async function pipelineMetricNames(): Promise<string[]> {
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults, prefix: METRIC_PREFIX });
  const defaultNames = new Set((await defaults.getMetricsAsJSON()).map((metric) => metric.name));
  const all = await createMetrics().registry.getMetricsAsJSON();
  return all.map((metric) => metric.name).filter((name) => !defaultNames.has(name));
}
