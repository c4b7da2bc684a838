// Evaluates PromQL on made-up series with Prometheus's own engine: `promtool test rules`
// (Debian's prometheus package, fetched by fetchPromtool()), so that a query is checked for
// what it computes, not only for the names it contains.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { cacheRoot } from '../../../deploy/local/artifacts.ts';

/** Where fetchPromtool() puts it (call that first), unless PROMTOOL names another. */
export const PROMTOOL = process.env['PROMTOOL'] ?? join(cacheRoot(), 'promtool', 'promtool');

/** Samples 15 s apart, as the ServiceMonitor scrapes. */
export const SCRAPE_SECONDS = 15;

export interface Series {
  series: string;
  /**
   * One value per scrape from time 0; undefined where the series has no sample; 'stale' where
   * Prometheus marks it gone (its target no longer scraped), which ends its 5-minute lookback.
   */
  values: (number | 'stale' | undefined)[];
}

/** Minute -> the query's value then: a single sample without labels. */
export type Expectations = [minute: number, value: number][];

/** Throws, with promtool's account of each difference, unless the query has every expected value. */
export function expectValues(
  query: string,
  series: Series[],
  expectations: Expectations,
  promtool = PROMTOOL,
): void {
  const dir = mkdtempSync(join(tmpdir(), 'partner-enrich-promtool-'));
  try {
    const file = join(dir, 'test.yaml');
    writeFileSync(
      file,
      stringify({
        rule_files: [],
        evaluation_interval: `${SCRAPE_SECONDS}s`,
        tests: [
          {
            interval: `${SCRAPE_SECONDS}s`,
            input_series: series.map(({ series: name, values }) => ({
              series: name,
              values: values.map((value) => (value === undefined ? '_' : String(value))).join(' '),
            })),
            promql_expr_test: expectations.map(([minute, value]) => ({
              expr: query,
              eval_time: `${Math.round(minute * 60)}s`,
              exp_samples: [{ labels: '{}', value }],
            })),
          },
        ],
      }),
    );
    execFileSync(promtool, ['test', 'rules', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
    if (failure.code === 'ENOENT')
      throw new Error(
        `${promtool} not found: PromQL cannot be evaluated without promtool ` +
          "(fetchPromtool() takes it from Debian's prometheus package; set PROMTOOL to use another)",
        { cause: error },
      );
    throw new Error([failure.stdout, failure.stderr].join('\n').trim(), { cause: error });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
