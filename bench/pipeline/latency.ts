// 6. Latency: from an input record's timestamp (the time it was due under the steady load,
// bench/support/steady-load.ts) to its MatchResult being appended to the matches topic
// (LogAppendTime, the broker's clock on the same machine), under a steady load at half the
// maximum measured in the same run (the overhead benchmark's, or drains of its backlog made
// for this one).
// The first tenth of each run is warm-up and left out. Each run measures at-least-once,
// then exactly-once at the same rate: there a MatchResult is appended when its partition's
// transaction is sent (every commit interval) and read_committed consumers see it once the
// transaction commits, a few milliseconds later. One pair of runs goes first and is not
// counted: a broker started moments before compiles its request paths for this load (the
// JVM's C2 compiler busy for about 20 s on the shared cores), which a deployment's long-running
// broker did long ago; its figures are reported apart.
import { TopicReaders } from '../../src/kafka/topic-reader.ts';
import type { ConfigInput } from '../../src/config/index.ts';
import { pipelineConfig, type BenchContext } from '../support/context.ts';
import { startWorker } from '../support/spawn.ts';
import { percentile, spread, type Spread } from '../support/stats.ts';
import { steadyLoad } from '../support/steady-load.ts';
import {
  createOutputTopics,
  createTopics,
  deleteTopics,
  pipelineTopics,
  uniqueName,
} from '../support/topics.ts';

export interface LatencyFigures {
  records: number;
  measured: number;
  offeredRate: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** The pipeline child's CPU over the run (first record read to last acknowledged), in cores. */
  cpuBusy: number;
  cpuPerRecordUs: number;
  /** The most the load generator fell behind the rate, in ms (its records' latencies include it); absent in results saved before. */
  loadMaxLateMs?: number;
}

export interface LatencySpreads {
  p50: Spread;
  p95: Spread;
  p99: Spread;
  max: Spread;
  /** Absent in results saved before they were measured. */
  cpuBusy?: Spread;
  cpuPerRecordUs?: Spread;
}

/** partner-enrich's maximum in the run the latency was measured in. */
export interface LatencyMaximum {
  /** Median records/s of the drains. */
  recordsPerSecond: number;
  /** `overhead`: the overhead benchmark's at-least-once drains; `drain`: the same drains made for this benchmark, the overhead benchmark not being in the run. */
  source: 'overhead' | 'drain';
  /** Records/s of each drain. */
  drains: number[];
}

export interface LatencyResult extends LatencySpreads {
  /** Offered load, records/s: half the pipeline's measured maximum, or BENCH_LATENCY_RATE. */
  rate: number;
  /** Absent when BENCH_LATENCY_RATE set the rate, and in results saved before it was recorded. */
  maximum?: LatencyMaximum;
  seconds: number;
  /** At-least-once, each run's figures. */
  runs: LatencyFigures[];
  /** The same load in exactly-once mode, in the same runs. */
  exactlyOnce: LatencySpreads & { runs: LatencyFigures[] };
  /** Exactly-once / at-least-once within each run. */
  exactlyOnceRatio: { p50: Spread; p95: Spread; p99: Spread };
  /** The pair of runs before the counted ones, on a broker new to the load (absent in results saved before it). */
  warmup?: { atLeastOnce: LatencyFigures; exactlyOnce: LatencyFigures };
}

/** One run: a pipeline worker under the steady load, its MatchResults' latencies read back. */
async function latencyRun(
  context: BenchContext,
  sandboxUrl: string,
  rate: number,
  seconds: number,
  overrides: ConfigInput,
): Promise<LatencyFigures> {
  const total = rate * seconds;
  const input = uniqueName('latency-in');
  await createTopics(context.kafka, [{ topic: input }]);
  const topics = pipelineTopics('latency', input);
  const created = await createOutputTopics(context.kafka, topics, [
    { name: 'message.timestamp.type', value: 'LogAppendTime' },
  ]);
  try {
    const worker = startWorker({
      kind: 'pipeline',
      count: total,
      config: pipelineConfig(context, sandboxUrl, topics, overrides),
    });
    await Promise.race([worker.ready, worker.result]);
    const load = await steadyLoad(context, input, { rate, total });
    const { details, elapsedMs, records } = await worker.result;
    const cpuMs = details.cpuMs ?? Number.NaN;
    const warmupEnd = load.startedAt + seconds * 100;
    const latencies: number[] = [];
    // read_committed (kafkajs's default): what a downstream consumer of either mode sees.
    await new TopicReaders(context.kafka).readToEnd(topics.matches, (message) => {
      const created = load.createdAt.get(message.key?.toString() ?? '');
      if (created !== undefined && created >= warmupEnd) latencies.push(Number(message.timestamp) - created);
    });
    latencies.sort((a, b) => a - b);
    return {
      records: total,
      measured: latencies.length,
      offeredRate: total / load.seconds,
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      max: latencies.at(-1) ?? Number.NaN,
      cpuBusy: cpuMs / elapsedMs,
      cpuPerRecordUs: (cpuMs * 1000) / records,
      loadMaxLateMs: load.maxLateMs,
    };
  } finally {
    await deleteTopics(context.kafka, [input, ...created]);
  }
}

const spreads = (runs: LatencyFigures[]): LatencySpreads => ({
  p50: spread(runs.map((r) => r.p50)),
  p95: spread(runs.map((r) => r.p95)),
  p99: spread(runs.map((r) => r.p99)),
  max: spread(runs.map((r) => r.max)),
  cpuBusy: spread(runs.map((r) => r.cpuBusy)),
  cpuPerRecordUs: spread(runs.map((r) => r.cpuPerRecordUs)),
});

const describe = (f: LatencyFigures) =>
  `${f.offeredRate.toFixed(0)} records/s offered; p50 ${f.p50} ms, p95 ${f.p95} ms, p99 ${f.p99} ms, max ${f.max} ms; ` +
  `pipeline CPU ${(f.cpuBusy * 100).toFixed(0)} % of a core, ${f.cpuPerRecordUs.toFixed(0)} µs per record; ` +
  `load at most ${f.loadMaxLateMs} ms behind its rate`;

export async function latencyUnderLoad(
  context: BenchContext,
  measureMaximum: () => Promise<LatencyMaximum>,
): Promise<LatencyResult> {
  // BENCH_LATENCY_RATE offers a load of its own instead (records/s); the maximum is then not needed.
  const fixedRate = Number(process.env.BENCH_LATENCY_RATE) || undefined;
  const maximum = fixedRate === undefined ? await measureMaximum() : undefined;
  const rate = fixedRate ?? Math.round((maximum as LatencyMaximum).recordsPerSecond / 2);
  context.log(
    maximum
      ? `load ${rate} records/s: half the maximum ${maximum.recordsPerSecond.toFixed(0)} records/s (${maximum.source})`
      : `load ${rate} records/s (BENCH_LATENCY_RATE)`,
  );
  const sandbox = await context.instantSandbox();
  const seconds = Math.max(10, Math.round(30 * context.scale));
  const pair = async (run: string) => {
    const atLeastOnce = await latencyRun(context, sandbox.url, rate, seconds, {});
    context.log(`${run}: ${describe(atLeastOnce)}`);
    const transactional = await latencyRun(context, sandbox.url, rate, seconds, { delivery: 'exactly-once' });
    context.log(`${run}, exactly-once: ${describe(transactional)}`);
    return { atLeastOnce, exactlyOnce: transactional };
  };
  const warmup = await pair('warm-up, not counted');
  const runs: LatencyFigures[] = [];
  const exactlyOnce: LatencyFigures[] = [];
  for (let run = 1; run <= context.runs; run += 1) {
    const measured = await pair(`run ${run}`);
    runs.push(measured.atLeastOnce);
    exactlyOnce.push(measured.exactlyOnce);
  }
  const ratio = (p: 'p50' | 'p95' | 'p99') =>
    spread(runs.map((r, i) => (exactlyOnce[i] as LatencyFigures)[p] / r[p]));
  return {
    rate,
    ...(maximum ? { maximum } : {}),
    seconds,
    ...spreads(runs),
    runs,
    exactlyOnce: { ...spreads(exactlyOnce), runs: exactlyOnce },
    exactlyOnceRatio: { p50: ratio('p50'), p95: ratio('p95'), p99: ratio('p99') },
    warmup,
  };
}
