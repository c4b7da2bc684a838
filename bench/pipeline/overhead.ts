// 1. Pipeline overhead: records/s of partner-enrich draining a backlog (Kafka -> decode ->
// map -> bulk lookup at an instant sandbox -> encode -> Kafka, one process) against a raw
// kafkajs passthrough of the same records on the same broker, run after run; and the same
// drain in exactly-once mode beside at-least-once, timed until every record's outputs are
// committed, its MatchResults counted back with a read_committed consumer.
import type { BenchContext } from '../support/context.ts';
import { drainRaw, drainWithPipeline, produceDistinct } from '../support/drain.ts';
import type { WorkerResult } from '../support/jobs.ts';
import { countMessages } from '../support/outputs.ts';
import { spread, type Spread } from '../support/stats.ts';
import { deleteTopics } from '../support/topics.ts';

export interface OverheadResult {
  records: number;
  recordBytes: number;
  /** Records/s of partner-enrich (at-least-once), of the raw passthrough, and their ratio within each run. */
  pipeline: Spread;
  raw: Spread;
  ratio: Spread;
  /** Records/s of partner-enrich in exactly-once mode and its ratio to at-least-once within each run. */
  exactlyOnce: Spread;
  exactlyOnceRatio: Spread;
  /** MatchResults a read_committed consumer reads after each exactly-once drain (one per record). */
  exactlyOnceMatches: Spread;
  /** CPU ms per 1,000 records of each process: where the time goes. */
  cpuPerThousand: {
    pipeline: Spread;
    sandbox: Spread;
    /** The broker's: absent when it was not measured (its process not found, see brokerCpuMeter). */
    brokerForPipeline?: Spread;
    exactlyOnce: Spread;
    sandboxForExactlyOnce: Spread;
    brokerForExactlyOnce?: Spread;
    raw: Spread;
    brokerForRaw?: Spread;
    /** The part of pipeline, exactlyOnce and raw on V8's helper threads (garbage collection, optimizing compilers); absent in results of earlier versions. */
    pipelineV8Helpers?: Spread;
    exactlyOnceV8Helpers?: Spread;
    rawV8Helpers?: Spread;
  };
  machineBusy: Spread;
  runs: { pipeline: WorkerResult; exactlyOnce: WorkerResult; raw: WorkerResult }[];
}

/**
 * partner-enrich's maximum when the overhead benchmark is not in the run: its backlog drained
 * by the same at-least-once pipeline, once per run, so that a figure derived from it (the
 * latency benchmark's load) comes from this machine and this code, not from a saved file.
 */
export async function pipelineMaximum(context: BenchContext): Promise<number[]> {
  const sandbox = await context.instantSandbox();
  const backlog = await produceDistinct(context, 'maximum', context.count(60_000));
  try {
    const drains: number[] = [];
    for (let run = 1; run <= context.runs; run += 1) {
      const drained = await drainWithPipeline(context, sandbox, backlog.topic, backlog.count);
      drains.push(drained.recordsPerSecond);
      context.log(`maximum, drain ${run}: ${drained.recordsPerSecond.toFixed(0)} records/s`);
    }
    return drains;
  } finally {
    await deleteTopics(context.kafka, [backlog.topic]);
  }
}

export async function pipelineOverhead(context: BenchContext): Promise<OverheadResult> {
  const sandbox = await context.instantSandbox();
  const backlog = await produceDistinct(context, 'overhead', context.count(60_000));
  const { count } = backlog;
  context.log(`backlog: ${count} records of ${backlog.recordBytes} bytes`);
  try {
    const runs: OverheadResult['runs'] = [];
    for (let run = 1; run <= context.runs; run += 1) {
      const raw = await drainRaw(context, backlog.topic, count);
      const pipeline = await drainWithPipeline(context, sandbox, backlog.topic, count);
      let committedMatches = 0;
      const exactlyOnce = await drainWithPipeline(
        context,
        sandbox,
        backlog.topic,
        count,
        { delivery: 'exactly-once' },
        {
          inspect: async (topics) => {
            committedMatches = (await countMessages(context.kafka, topics.matches)).messages;
          },
        },
      );
      exactlyOnce.details.committedMatches = committedMatches;
      runs.push({ pipeline, exactlyOnce, raw });
      context.log(
        `run ${run}: pipeline ${pipeline.recordsPerSecond.toFixed(0)} records/s, raw ${raw.recordsPerSecond.toFixed(0)} records/s, ratio ${(pipeline.recordsPerSecond / raw.recordsPerSecond).toFixed(2)}; ` +
          `exactly-once ${exactlyOnce.recordsPerSecond.toFixed(0)} records/s (${(exactlyOnce.recordsPerSecond / pipeline.recordsPerSecond).toFixed(2)}x), ` +
          `${exactlyOnce.details.committedMatches} MatchResults read_committed`,
      );
    }
    const perThousand = (r: WorkerResult, key: string) => ((r.details[key] ?? 0) / r.records) * 1000;
    const cpu = (pick: (r: OverheadResult['runs'][number]) => WorkerResult, key: string) =>
      spread(runs.map((r) => perThousand(pick(r), key)));
    // Counted as 0 when unmeasured, the broker would look free.
    const brokerCpu = (pick: (r: OverheadResult['runs'][number]) => WorkerResult) =>
      runs.every((r) => pick(r).details.brokerCpuMs !== undefined) ? cpu(pick, 'brokerCpuMs') : undefined;
    return {
      records: count,
      recordBytes: backlog.recordBytes,
      pipeline: spread(runs.map((r) => r.pipeline.recordsPerSecond)),
      raw: spread(runs.map((r) => r.raw.recordsPerSecond)),
      ratio: spread(runs.map((r) => r.pipeline.recordsPerSecond / r.raw.recordsPerSecond)),
      exactlyOnce: spread(runs.map((r) => r.exactlyOnce.recordsPerSecond)),
      exactlyOnceRatio: spread(runs.map((r) => r.exactlyOnce.recordsPerSecond / r.pipeline.recordsPerSecond)),
      exactlyOnceMatches: spread(runs.map((r) => r.exactlyOnce.details.committedMatches ?? 0)),
      cpuPerThousand: {
        pipeline: cpu((r) => r.pipeline, 'cpuMs'),
        sandbox: cpu((r) => r.pipeline, 'sandboxCpuMs'),
        brokerForPipeline: brokerCpu((r) => r.pipeline),
        exactlyOnce: cpu((r) => r.exactlyOnce, 'cpuMs'),
        sandboxForExactlyOnce: cpu((r) => r.exactlyOnce, 'sandboxCpuMs'),
        brokerForExactlyOnce: brokerCpu((r) => r.exactlyOnce),
        raw: cpu((r) => r.raw, 'cpuMs'),
        brokerForRaw: brokerCpu((r) => r.raw),
        pipelineV8Helpers: cpu((r) => r.pipeline, 'v8HelpersCpuMs'),
        exactlyOnceV8Helpers: cpu((r) => r.exactlyOnce, 'v8HelpersCpuMs'),
        rawV8Helpers: cpu((r) => r.raw, 'v8HelpersCpuMs'),
      },
      machineBusy: spread(runs.map((r) => r.pipeline.details.machineBusy ?? 0)),
      runs,
    };
  } finally {
    await deleteTopics(context.kafka, [backlog.topic]);
  }
}
