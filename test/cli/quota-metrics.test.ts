// The quota metrics of an enrichment as the CLI assembles it, against the sandbox's usage API.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFileEnrichment } from '../../src/cli/enrichment.ts';
import { loadConfig } from '../../src/config/index.ts';
import { createMetrics, subscribeMetrics } from '../../src/observability/index.ts';
import { eventObserver } from '../../src/pipeline/event-observer.ts';
import { generateDataset } from '../../src/sandbox/dataset/dataset.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { partnerOf } from '../../src/sandbox/upstream-partners.ts';

describe('the quota metrics', () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, orgs: 50, seed: 3 });
  });
  afterAll(() => sandbox?.close());

  it('regression: partner_enrich_quota_over_limit_total counted quota pauses, not OVER_LIMIT answers (the exhausted-quota alert saw no increase after the first 5 minutes)', async () => {
    const dataset = generateDataset({ organizations: 50, seed: 3 });
    const lines = [1, 2, 3].map((i) =>
      JSON.stringify(
        partnerOf(dataset.organizations[i] as (typeof dataset.organizations)[number], `Q-${i}`, 'ERP', 1),
      ),
    );
    const dir = await mkdtemp(join(tmpdir(), 'quota-metrics-'));
    await writeFile(join(dir, 'in.ndjson'), `${lines.join('\n')}\n`);
    const config = loadConfig({
      env: {},
      overrides: {
        source: 'file',
        files: { input: join(dir, 'in.ndjson'), outputDir: join(dir, 'out') },
        refdata: { baseUrl: sandbox.url, apiKey: 'sandbox-api-key' },
        batching: { lingerMs: 20 },
        polling: { initialDelayMs: 10, maxDelayMs: 100 },
        quota: { initialBackoffMs: 10, maxBackoffMs: 20 },
      },
    });
    const metrics = createMetrics();
    const unsubscribe = subscribeMetrics(metrics);
    try {
      sandbox.state.faults.update({ overLimit: true });
      const enrichment = await createFileEnrichment(config, eventObserver('file'));
      await enrichment.pipeline.start();
      await expect
        .poll(() => sandbox.state.stats.snapshot().quotaOverLimit, { timeout: 10_000 })
        .toBeGreaterThan(4);
      sandbox.state.faults.update({ overLimit: false });
      await enrichment.source.drained;
      await enrichment.pipeline.idle();
      await enrichment.stop(1_000);
      const [counter] = (await metrics.registry.getMetricsAsJSON())
        .filter((metric) => metric.name === 'partner_enrich_quota_over_limit_total')
        .flatMap((metric) => metric.values);
      expect(counter?.value).toBe(sandbox.state.stats.snapshot().quotaOverLimit);
    } finally {
      sandbox.state.faults.update({ overLimit: false });
      unsubscribe();
    }
  });
});
