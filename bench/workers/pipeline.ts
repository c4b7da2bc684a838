// partner-enrich as the CLI builds it (src/cli/enrichment.ts), timed from its first record
// read to the moment every record's outputs are acknowledged by Kafka (at-least-once) or
// committed in their partition's transaction (exactly-once: staged outputs are visible to
// nobody until then, so a record counts as finished only once its position is committed).
import { createKafkaEnrichment } from '../../src/cli/enrichment.ts';
import { loadConfig } from '../../src/config/index.ts';
import { combineObservers } from '../../src/pipeline/ports.ts';
import { RunSummary } from '../../src/pipeline/run-summary.ts';
import type { ConfigInput } from '../../src/config/index.ts';
import type { WorkerResult } from '../support/jobs.ts';
import { cpuMeter, memorySampler, peakRssMb, until, type CpuUse } from '../support/process-stats.ts';

/** Runs until `count` records are finished: a number, or one the parent tells later. */
export async function pipelineRun(
  overrides: ConfigInput,
  count: number | Promise<number>,
  ready: () => void,
): Promise<WorkerResult> {
  const config = loadConfig({ env: {}, overrides });
  const summary = new RunSummary();
  const memory = memorySampler(() => summary.finished);
  let first: number | undefined;
  let meter: (() => CpuUse) | undefined;
  const exactlyOnce = config.delivery === 'exactly-once';
  // The benchmark's input topics are written without transactions from offset 0, so the
  // committed positions (next offset to read) of its partitions add up to the records covered.
  const committedPositions = new Map<number, number>();
  let committedRecords = 0;
  let allCommittedAt: number | undefined;
  /** The records to wait for, once known. */
  let target = Number.POSITIVE_INFINITY;
  const allCommitted = () => {
    if (committedRecords >= target) allCommittedAt ??= performance.now();
  };
  const observer = combineObservers(summary, {
    recordIn: () => {
      if (first !== undefined) return;
      first = performance.now();
      meter = cpuMeter();
    },
    committed: (positions) => {
      for (const p of positions)
        committedPositions.set(p.partition, Math.max(p.offset, committedPositions.get(p.partition) ?? 0));
      committedRecords = [...committedPositions.values()].reduce((sum, offset) => sum + offset, 0);
      allCommitted();
    },
  });
  const enrichment = await createKafkaEnrichment(config, observer);
  await enrichment.pipeline.start();
  ready();
  // Told later: a failure meanwhile must not wait for the parent.
  const records = await Promise.race([
    count,
    enrichment.pipeline.failed.then((error) => Promise.reject(error)),
  ]);
  target = records;
  allCommitted();
  await until(
    () => summary.finished >= records || enrichment.pipeline.failure !== undefined,
    () => `pipeline: ${summary.finished} of ${records} finished`,
    30 * 60_000,
  );
  if (enrichment.pipeline.failure) throw enrichment.pipeline.failure;
  // finished counts records whose outputs are being written (or staged); idle() waits for the acks.
  await enrichment.pipeline.idle();
  if (exactlyOnce) {
    await until(
      () => allCommittedAt !== undefined || enrichment.pipeline.failure !== undefined,
      () => `pipeline: ${committedRecords} of ${records} committed`,
      5 * 60_000,
    );
    if (enrichment.pipeline.failure) throw enrichment.pipeline.failure;
  }
  const elapsedMs = (allCommittedAt ?? performance.now()) - (first ?? performance.now());
  const cpu = meter?.();
  const peaks = memory();
  const peak = peakRssMb();
  // With --expose-gc: the heap still reachable once garbage is gone (mostly the storage index).
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const live: Record<string, number> = gc
    ? { liveHeapAtEndMb: process.memoryUsage().heapUsed / 1024 / 1024 }
    : {};
  // Every measured record is done; what a partial drain left in flight is abandoned.
  await enrichment.stop(0);
  return {
    records: summary.finished,
    elapsedMs,
    recordsPerSecond: summary.finished / (elapsedMs / 1000),
    peakRssMb: peak,
    memory: peaks.series,
    details: {
      cpuMs: cpu?.processMs ?? 0,
      v8HelpersCpuMs: cpu?.v8HelpersMs ?? 0,
      machineBusy: cpu?.machineBusy ?? 0,
      peakHeapUsedMb: peaks.heapUsedMb,
      peakHeapTotalMb: peaks.heapTotalMb,
      peakExternalMb: peaks.externalMb,
      ...live,
      bulks: summary.bulks,
      tasksSubmitted: summary.tasksSubmitted,
      quotaConsumed: summary.quotaConsumed,
      reused: summary.reused,
      coalesced: enrichment.pipeline.coalesced,
      deadLettered: summary.deadLettered,
      quotaPauses: summary.pauses.get('quota') ?? 0,
      backpressurePauses: summary.pauses.get('backpressure') ?? 0,
      ...(exactlyOnce ? { committedRecords } : {}),
    },
  };
}
