// The retry metrics of an enrichment as the CLI assembles it, against a sandbox that answers
// some requests 429: every retry the operator's dashboard and runbooks look for is counted.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFileEnrichment } from '../../src/cli/enrichment.ts';
import { loadConfig } from '../../src/config/index.ts';
import { createMetrics, subscribeMetrics, type Metrics } from '../../src/observability/index.ts';
import { eventObserver } from '../../src/pipeline/event-observer.ts';
import { generateDataset } from '../../src/sandbox/dataset/dataset.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { upstreamPartners } from '../../src/sandbox/upstream-partners.ts';

/** The counter's value per label value of `label`. */
async function byLabel(metrics: Metrics, name: string, label: string): Promise<Record<string, number>> {
  const values = (await metrics.registry.getMetricsAsJSON())
    .filter((metric) => metric.name === name)
    .flatMap((metric) => metric.values);
  const sums: Record<string, number> = {};
  for (const { labels, value } of values) {
    const key = String(labels[label]);
    sums[key] = (sums[key] ?? 0) + value;
  }
  return sums;
}

describe('the retry metrics', () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({
      port: 0,
      orgs: 200,
      seed: 4,
      faults: { throttleRate: 0.3, retryAfterSeconds: 0 },
    });
  });
  afterAll(() => sandbox?.close());

  it('regression: partner_enrich_retries_total did not count the client\'s own retries: 429s a retry got through left it without a series, beside http_requests_total{status="429"}; now one REFDATA_RATE_LIMITED retry per 429 the sandbox answered', async () => {
    const partners = upstreamPartners(generateDataset({ organizations: 200, seed: 4 }), {
      count: 120,
      seed: 4,
      invalid: 0,
      resent: 0,
      updated: 0,
    });
    const dir = await mkdtemp(join(tmpdir(), 'retry-metrics-'));
    const input = join(dir, 'partners.ndjson');
    await writeFile(input, partners.map((p) => JSON.stringify(p.partner)).join('\n') + '\n');
    const config = loadConfig({
      env: {},
      overrides: {
        source: 'file',
        files: { input, outputDir: join(dir, 'out') },
        refdata: { baseUrl: sandbox.url, apiKey: 'sandbox-api-key' },
        batching: { lingerMs: 10, maxTasks: 20 },
        polling: { initialDelayMs: 10, maxDelayMs: 50 },
        retry: { initialDelayMs: 10, maxDelayMs: 50 },
      },
    });
    const metrics = createMetrics();
    const unsubscribe = subscribeMetrics(metrics);
    try {
      const enrichment = await createFileEnrichment(config, eventObserver('file'));
      await enrichment.pipeline.start();
      await enrichment.source.drained;
      await enrichment.pipeline.idle();
      await enrichment.stop(1_000);
    } finally {
      unsubscribe();
    }
    const { injectedThrottles } = sandbox.state.stats.snapshot();
    expect(injectedThrottles).toBeGreaterThan(0);
    const statuses = await byLabel(metrics, 'partner_enrich_http_requests_total', 'status');
    expect(statuses['429']).toBe(injectedThrottles);
    const retries = await byLabel(metrics, 'partner_enrich_retries_total', 'reason');
    expect(retries).toEqual({ REFDATA_RATE_LIMITED: injectedThrottles });
  });
});
