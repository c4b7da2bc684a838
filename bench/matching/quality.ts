// Matching quality and throughput of the sandbox matcher over a generated dataset.
//   node bench/matching/quality.ts [--organizations 100000] [--queries 4000] [--seed 42]
// Precision and recall are those of the best match at the default threshold (0.5); queries
// for organizations outside the dataset measure false positives. Throughput is lookups per
// second on one thread, that is per core.

import { parseArgs } from 'node:util';
import { generateDataset } from '../../src/sandbox/dataset/dataset.ts';
import { classifyMatch, DEFAULT_MATCH_THRESHOLDS } from '../../src/sandbox/matching/classification.ts';
import type { LookupFeature } from '../../src/sandbox/matching/features.ts';
import { Matcher } from '../../src/sandbox/matching/matcher.ts';
import { subjectFromBusinessPartnerParam } from '../../src/sandbox/matching/query-shapes.ts';
import type { NoisyQuery } from './noise.ts';
import { buildQuerySet } from './queries.ts';
import type { MatchingBenchmarkResult, QueryOutcome } from './report.ts';
import { printReport, summarize } from './report.ts';

export interface MatchingBenchmarkOptions {
  readonly organizations?: number;
  readonly seed?: number;
  /** Noisy queries for the quality figures. */
  readonly queries?: number;
  /** Share of those queries for organizations outside the dataset. */
  readonly absentShare?: number;
  /** Lookups timed for the throughput figure. */
  readonly throughputLookups?: number;
  readonly featuresOn?: readonly LookupFeature[];
}

/** CPU time of the process (all threads) since `start`, in milliseconds. */
function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** Lowest threshold the threshold table reports; lookups run with it and filter above. */
const LOWEST_REPORTED_THRESHOLD = 0.3;

export function runMatchingBenchmark(options: MatchingBenchmarkOptions = {}): MatchingBenchmarkResult {
  const organizations = options.organizations ?? 100_000;
  const seed = options.seed ?? 42;
  const featuresOn = [...(options.featuresOn ?? [])];

  const loadStart = performance.now();
  const loadCpuStart = process.cpuUsage();
  const dataset = generateDataset({ organizations, seed });
  const loadMs = performance.now() - loadStart;
  const loadCpuMs = cpuMsSince(loadCpuStart);
  const matcher = new Matcher(dataset.matchIndex);
  const queries = buildQuerySet(dataset, {
    queries: options.queries ?? 4000,
    absentShare: options.absentShare ?? 0.1,
    seed: seed + 1000,
  });
  const subjects = queries.map((query) => subjectFromBusinessPartnerParam(query.param));

  const outcomes: QueryOutcome[] = queries.map((query: NoisyQuery, i) => {
    const page = matcher.lookup(subjects[i] ?? { names: [], identifiers: [] }, {
      limit: 1,
      matchingThreshold: LOWEST_REPORTED_THRESHOLD,
      featuresOn,
    });
    const best = page.values[0];
    const predicted = best === undefined ? undefined : dataset.organizationOf(best.svcId)?.index;
    return { query, bestScore: best?.score, correct: predicted !== undefined && predicted === query.truth };
  });

  const throughputLookups = options.throughputLookups ?? 5000;
  const lookupOptions = { featuresOn };
  for (let i = 0; i < Math.min(500, subjects.length); i++)
    matcher.lookup(subjects[i] ?? { names: [], identifiers: [] }, lookupOptions);
  const timedStart = performance.now();
  const timedCpuStart = process.cpuUsage();
  for (let i = 0; i < throughputLookups; i++) {
    matcher.lookup(subjects[i % subjects.length] ?? { names: [], identifiers: [] }, lookupOptions);
  }
  const lookupsPerSecond = throughputLookups / ((performance.now() - timedStart) / 1000);
  // Lookups run on one thread: per CPU second is per core, and holds on a busy machine too.
  const lookupsPerSecondPerCore = throughputLookups / (cpuMsSince(timedCpuStart) / 1000);

  return summarize(outcomes, {
    organizations,
    records: dataset.recordCount,
    loadMs,
    loadCpuMs,
    lookupsPerSecond,
    lookupsPerSecondPerCore,
    defaultThreshold: 0.5,
    classify: (score) => classifyMatch(score, DEFAULT_MATCH_THRESHOLDS),
  });
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      organizations: { type: 'string', default: '100000' },
      queries: { type: 'string', default: '4000' },
      seed: { type: 'string', default: '42' },
      'absent-share': { type: 'string', default: '0.1' },
    },
  });
  printReport(
    runMatchingBenchmark({
      organizations: Number(values.organizations),
      queries: Number(values.queries),
      seed: Number(values.seed),
      absentShare: Number(values['absent-share']),
    }),
  );
}
