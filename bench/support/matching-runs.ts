// The sandbox matcher's quality and speed (bench/matching), repeated like every other figure.
// Precision and recall are seeded and come out the same each run; lookups/s varies.
import { runMatchingBenchmark } from '../matching/quality.ts';
import type { MatchingBenchmarkResult } from '../matching/report.ts';
import { spread, type Spread } from './stats.ts';

export interface MatchingRuns {
  organizations: number;
  precision: Spread;
  recall: Spread;
  lookupsPerSecondPerCore: Spread;
  /** The first run's full report (thresholds, noise kinds, classifications). */
  first: MatchingBenchmarkResult;
}

export function matchingRuns(organizations: number, runs: number, log: (line: string) => void): MatchingRuns {
  const results: MatchingBenchmarkResult[] = [];
  for (let run = 1; run <= runs; run += 1) {
    const result = runMatchingBenchmark({ organizations });
    results.push(result);
    log(
      `run ${run}: precision ${(result.precision * 100).toFixed(1)}%, recall ${(result.recall * 100).toFixed(1)}%, ${result.lookupsPerSecondPerCore.toFixed(0)} lookups/s per core`,
    );
  }
  return {
    organizations,
    precision: spread(results.map((r) => r.precision)),
    recall: spread(results.map((r) => r.recall)),
    lookupsPerSecondPerCore: spread(results.map((r) => r.lookupsPerSecondPerCore)),
    first: results[0] as MatchingBenchmarkResult,
  };
}
