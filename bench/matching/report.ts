import type { MatchClassification } from '../../src/sandbox/matching/classification.ts';
import type { NoiseKind, NoisyQuery } from './noise.ts';
import { NOISE_KINDS } from './noise.ts';

export interface QueryOutcome {
  readonly query: NoisyQuery;
  /** Score of the best candidate, if any reached the lowest reported threshold. */
  readonly bestScore: number | undefined;
  /** Whether the best candidate is the query's organization. */
  readonly correct: boolean;
}

export interface QualityAtThreshold {
  readonly threshold: number;
  /** Correct best matches / best matches returned (all queries). */
  readonly precision: number;
  /** Correct best matches / queries for organizations in the dataset. */
  readonly recall: number;
  /** Queries for absent organizations that returned a best match / such queries. */
  readonly falsePositiveRate: number;
}

export interface MatchingBenchmarkResult extends QualityAtThreshold {
  readonly organizations: number;
  readonly records: number;
  /** Wall time to generate and index the dataset. */
  readonly loadMs: number;
  /** CPU time of the same, all threads (the garbage collector works on helper threads). */
  readonly loadCpuMs: number;
  readonly queries: number;
  readonly presentQueries: number;
  readonly absentQueries: number;
  /** Lookups per second of wall time, on one thread. */
  readonly lookupsPerSecond: number;
  /** Lookups per CPU second, on one thread: independent of other load on the machine. */
  readonly lookupsPerSecondPerCore: number;
  /** Recall at the default threshold of the queries that had each kind of noise. */
  readonly recallByNoise: Readonly<Record<NoiseKind, { queries: number; recall: number }>>;
  readonly recallByShape: Readonly<Record<NoisyQuery['shape'], number>>;
  readonly thresholds: readonly QualityAtThreshold[];
  /** Per classification of the best score: how many, and the share that was right. */
  readonly classifications: Readonly<Record<MatchClassification, { count: number; precision: number }>>;
}

interface RunFacts {
  readonly organizations: number;
  readonly records: number;
  readonly loadMs: number;
  readonly loadCpuMs: number;
  readonly lookupsPerSecond: number;
  readonly lookupsPerSecondPerCore: number;
  readonly defaultThreshold: number;
  classify(score: number | undefined): MatchClassification;
}

const share = (part: number, whole: number): number => (whole === 0 ? 0 : part / whole);

function qualityAt(outcomes: readonly QueryOutcome[], threshold: number): QualityAtThreshold {
  const returned = outcomes.filter(
    (outcome) => outcome.bestScore !== undefined && outcome.bestScore >= threshold,
  );
  const correct = returned.filter((outcome) => outcome.correct).length;
  const present = outcomes.filter((outcome) => outcome.query.truth !== undefined).length;
  const absent = outcomes.length - present;
  const falsePositives = returned.filter((outcome) => outcome.query.truth === undefined).length;
  return {
    threshold,
    precision: share(correct, returned.length),
    recall: share(correct, present),
    falsePositiveRate: share(falsePositives, absent),
  };
}

export function summarize(outcomes: readonly QueryOutcome[], facts: RunFacts): MatchingBenchmarkResult {
  const present = outcomes.filter((outcome) => outcome.query.truth !== undefined);
  const atDefault = (outcome: QueryOutcome): boolean =>
    outcome.correct && outcome.bestScore !== undefined && outcome.bestScore >= facts.defaultThreshold;
  const recallOf = (subset: readonly QueryOutcome[]): number =>
    share(subset.filter(atDefault).length, subset.length);
  const recallByNoise = Object.fromEntries(
    NOISE_KINDS.map((kind) => {
      const subset = present.filter((outcome) => outcome.query.noise.includes(kind));
      return [kind, { queries: subset.length, recall: recallOf(subset) }];
    }),
  ) as Record<NoiseKind, { queries: number; recall: number }>;
  const classifications = Object.fromEntries(
    (['MATCH', 'MAYBE_MATCH', 'NO_MATCH'] as const).map((classification) => {
      const subset = outcomes.filter((outcome) => facts.classify(outcome.bestScore) === classification);
      return [
        classification,
        { count: subset.length, precision: share(subset.filter((o) => o.correct).length, subset.length) },
      ];
    }),
  ) as Record<MatchClassification, { count: number; precision: number }>;
  return {
    ...qualityAt(outcomes, facts.defaultThreshold),
    organizations: facts.organizations,
    records: facts.records,
    loadMs: facts.loadMs,
    loadCpuMs: facts.loadCpuMs,
    queries: outcomes.length,
    presentQueries: present.length,
    absentQueries: outcomes.length - present.length,
    lookupsPerSecond: facts.lookupsPerSecond,
    lookupsPerSecondPerCore: facts.lookupsPerSecondPerCore,
    recallByNoise,
    recallByShape: {
      normalized: recallOf(present.filter((outcome) => outcome.query.shape === 'normalized')),
      jsonRecord: recallOf(present.filter((outcome) => outcome.query.shape === 'jsonRecord')),
    },
    thresholds: [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9].map((threshold) => qualityAt(outcomes, threshold)),
    classifications,
  };
}

const percent = (value: number): string => `${(value * 100).toFixed(1)}%`;

export function printReport(result: MatchingBenchmarkResult): void {
  const lines = [
    `dataset: ${result.organizations} organizations, ${result.records} records, generated and indexed in ${result.loadMs.toFixed(0)} ms (${result.loadCpuMs.toFixed(0)} ms CPU, all threads)`,
    `queries: ${result.queries} (${result.presentQueries} for organizations in the dataset, ${result.absentQueries} for absent ones)`,
    '',
    `at the default threshold ${result.threshold}:`,
    `  precision ${percent(result.precision)}  recall ${percent(result.recall)}  false positives ${percent(result.falsePositiveRate)}`,
    `  recall, normalized input ${percent(result.recallByShape.normalized)}, jsonRecord input ${percent(result.recallByShape.jsonRecord)}`,
    '',
    'recall by kind of noise:',
    ...NOISE_KINDS.map((kind) => {
      const entry = result.recallByNoise[kind];
      return `  ${kind.padEnd(20)} ${percent(entry.recall).padStart(6)}  (${entry.queries} queries)`;
    }),
    '',
    'threshold  precision  recall  false positives',
    ...result.thresholds.map(
      (row) =>
        `  ${row.threshold.toFixed(2).padEnd(9)}${percent(row.precision).padStart(9)}${percent(row.recall).padStart(8)}${percent(row.falsePositiveRate).padStart(17)}`,
    ),
    '',
    'classification of the best score (default thresholds):',
    ...Object.entries(result.classifications).map(
      ([name, entry]) =>
        `  ${name.padEnd(12)} ${String(entry.count).padStart(6)} queries, ${percent(entry.precision)} right`,
    ),
    '',
    `throughput: ${result.lookupsPerSecondPerCore.toFixed(0)} lookups per CPU second on one thread (per core); ${result.lookupsPerSecond.toFixed(0)} per wall second`,
  ];
  console.log(lines.join('\n'));
}
