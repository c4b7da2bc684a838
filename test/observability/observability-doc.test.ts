import { readFileSync } from 'node:fs';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CHANNEL_NAMES, createMetrics, METRIC_PREFIX, SPAN_KINDS } from '../../src/observability/index.ts';
import { SECRET_LOG_KEYS } from '../../src/observability/log-redaction.ts';
import { PIPELINE_METRIC_NAMES } from './metric-names.ts';

const doc = readFileSync(new URL('../../docs/OBSERVABILITY.md', import.meta.url), 'utf8');

async function pipelineMetricNames(): Promise<string[]> {
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults, prefix: METRIC_PREFIX });
  const defaultNames = new Set((await defaults.getMetricsAsJSON()).map((metric) => metric.name));
  const all = await createMetrics().registry.getMetricsAsJSON();
  return all.map((metric) => metric.name).filter((name) => !defaultNames.has(name));
}

describe('docs/OBSERVABILITY.md', () => {
  it('documents exactly the metrics the pipeline registers', async () => {
    const documented = [...doc.matchAll(/^\| `(partner_enrich_[a-z_]+)`/gm)].map((match) => match[1]);
    const registered = await pipelineMetricNames();
    expect(documented.sort()).toEqual([...registered].sort());
    expect(registered.sort()).toEqual([...PIPELINE_METRIC_NAMES].sort());
  });

  it('documents every event channel', () => {
    for (const name of Object.values(CHANNEL_NAMES)) expect(doc).toContain(`| \`${name}\``);
  });

  it('documents every endpoint', () => {
    for (const path of ['/metrics', '/healthz', '/readyz']) expect(doc).toContain(`| \`${path}\``);
  });

  it('documents every span the pipeline makes', () => {
    const documented = [...doc.slice(doc.indexOf('### Spans')).matchAll(/^\| `([a-z ]+)` +\|/gm)].map(
      (match) => match[1],
    );
    expect(documented).toEqual(Object.keys(SPAN_KINDS));
  });

  it('documents every key the logger censors', () => {
    for (const key of SECRET_LOG_KEYS) expect(doc).toContain(`\`${key}\``);
  });
});
