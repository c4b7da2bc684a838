// 4. Memory: peak RSS of the pipeline's own process (a child of its own; VmHWM, the kernel's
// high-water mark) while it drains a backlog of 1,000,000 distinct partners, whole, to the
// end, with the default configuration (BENCH_MEMORY_DRAIN=<n> drains only the first n x scale).
// RSS along the drain and the heap left reachable at its end show whether anything grows
// with the number of partners seen (the partner state lives on disk, not in the heap).
import type { BenchContext } from '../support/context.ts';
import { drainWithPipeline, produceDistinct } from '../support/drain.ts';
import type { WorkerResult } from '../support/jobs.ts';
import { spread, type Spread } from '../support/stats.ts';
import { deleteTopics } from '../support/topics.ts';

export interface MemoryResult {
  backlog: number;
  drained: number;
  produceSeconds: number;
  peakRssMb: Spread;
  peakHeapUsedMb: Spread;
  /** Heap reachable after the drain (a full GC). */
  liveHeapAtEndMb: Spread;
  recordsPerSecond: Spread;
  /** RSS along the first run, sampled every 2 s. */
  series: NonNullable<WorkerResult['memory']>;
  runs: WorkerResult[];
}

/** BENCH_MEMORY_DRAIN: `all` (unset), or the records of the full-scale backlog each run drains. */
export function memoryDrainSetting(value: string | undefined): 'all' | number {
  if (value === undefined || value === 'all') return 'all';
  const records = Number(value);
  // A NaN would reach the worker as its record count, which then never finishes.
  if (!Number.isInteger(records) || records < 1)
    throw new Error(`BENCH_MEMORY_DRAIN must be 'all' or a whole number >= 1, not '${value}'`);
  return records;
}

export async function memoryDrain(context: BenchContext): Promise<MemoryResult> {
  const sandbox = await context.instantSandbox();
  const backlogSize = context.count(1_000_000);
  const setting = memoryDrainSetting(process.env.BENCH_MEMORY_DRAIN);
  const drained = setting === 'all' ? backlogSize : Math.min(backlogSize, context.count(setting));
  const backlog = await produceDistinct(context, 'memory', backlogSize);
  context.log(
    `backlog: ${backlogSize} records produced in ${(backlog.produceMs / 1000).toFixed(0)} s; each run drains ${drained}`,
  );
  const runs: WorkerResult[] = [];
  try {
    for (let run = 1; run <= context.runs; run += 1) {
      const result = await drainWithPipeline(
        context,
        sandbox,
        backlog.topic,
        drained,
        {},
        { nodeFlags: ['--expose-gc'] },
      );
      runs.push(result);
      context.log(
        `run ${run}: peak RSS ${result.peakRssMb.toFixed(0)} MB, peak heap ${result.details.peakHeapUsedMb?.toFixed(0)} MB, reachable at end ${result.details.liveHeapAtEndMb?.toFixed(0)} MB, ${result.recordsPerSecond.toFixed(0)} records/s`,
      );
    }
  } finally {
    await deleteTopics(context.kafka, [backlog.topic]);
  }
  return {
    backlog: backlogSize,
    drained,
    produceSeconds: backlog.produceMs / 1000,
    peakRssMb: spread(runs.map((r) => r.peakRssMb)),
    peakHeapUsedMb: spread(runs.map((r) => r.details.peakHeapUsedMb ?? 0)),
    liveHeapAtEndMb: spread(runs.map((r) => r.details.liveHeapAtEndMb ?? 0)),
    recordsPerSecond: spread(runs.map((r) => r.recordsPerSecond)),
    series: runs[0]?.memory ?? [],
    runs: runs.map((r) => ({ ...r, memory: [] })),
  };
}
