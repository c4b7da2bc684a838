// 1. Pipeline overhead: records/s of partner-enrich draining a backlog (Kafka -> decode ->
// map -> bulk lookup at an instant sandbox -> encode -> Kafka, at-least-once, one process)
// against a raw kafkajs passthrough of the same records on the same broker, run after run.
import type { BenchContext } from '../support/context.ts';
import { drainRaw, drainWithPipeline, produceDistinct } from '../support/drain.ts';
import type { WorkerResult } from '../support/jobs.ts';
import { spread, type Spread } from '../support/stats.ts';
import { deleteTopics } from '../support/topics.ts';

export interface OverheadResult {
  records: number;
  recordBytes: number;
  /** Records/s of partner-enrich, of the raw passthrough, and their ratio within each run. */
  pipeline: Spread;
  raw: Spread;
  ratio: Spread;
  /** CPU ms per 1,000 records of each process: where the time goes. */
  cpuPerThousand: {
    pipeline: Spread;
    sandbox: Spread;
    brokerForPipeline: Spread;
    raw: Spread;
    brokerForRaw: Spread;
  };
  machineBusy: Spread;
  runs: { pipeline: WorkerResult; raw: WorkerResult }[];
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
      runs.push({ pipeline, raw });
      context.log(
        `run ${run}: pipeline ${pipeline.recordsPerSecond.toFixed(0)} records/s, raw ${raw.recordsPerSecond.toFixed(0)} records/s, ratio ${(pipeline.recordsPerSecond / raw.recordsPerSecond).toFixed(2)}`,
      );
    }
    const perThousand = (r: WorkerResult, key: string) => ((r.details[key] ?? 0) / r.records) * 1000;
    return {
      records: count,
      recordBytes: backlog.recordBytes,
      pipeline: spread(runs.map((r) => r.pipeline.recordsPerSecond)),
      raw: spread(runs.map((r) => r.raw.recordsPerSecond)),
      ratio: spread(runs.map((r) => r.pipeline.recordsPerSecond / r.raw.recordsPerSecond)),
      cpuPerThousand: {
        pipeline: spread(runs.map((r) => perThousand(r.pipeline, 'cpuMs'))),
        sandbox: spread(runs.map((r) => perThousand(r.pipeline, 'sandboxCpuMs'))),
        brokerForPipeline: spread(runs.map((r) => perThousand(r.pipeline, 'brokerCpuMs'))),
        raw: spread(runs.map((r) => perThousand(r.raw, 'cpuMs'))),
        brokerForRaw: spread(runs.map((r) => perThousand(r.raw, 'brokerCpuMs'))),
      },
      machineBusy: spread(runs.map((r) => r.pipeline.details.machineBusy ?? 0)),
      runs,
    };
  } finally {
    await deleteTopics(context.kafka, [backlog.topic]);
  }
}
