// partner-enrich as the CLI builds it (src/cli/enrichment.ts), timed from its first record
// read to the moment every record's outputs are acknowledged by Kafka.
import { createKafkaEnrichment } from '../../src/cli/enrichment.ts';
import { loadConfig } from '../../src/config/index.ts';
import { combineObservers } from '../../src/pipeline/ports.ts';
import { RunSummary } from '../../src/pipeline/run-summary.ts';
import type { WorkerJob, WorkerResult } from '../support/jobs.ts';
import { cpuMeter, memorySampler, peakRssMb, until, type CpuUse } from '../support/process-stats.ts';

export async function pipelineRun(
  job: Extract<WorkerJob, { kind: 'pipeline' }>,
  ready: () => void,
): Promise<WorkerResult> {
  const config = loadConfig({ env: {}, overrides: job.config });
  const summary = new RunSummary();
  const memory = memorySampler(() => summary.finished);
  let first: number | undefined;
  let meter: (() => CpuUse) | undefined;
  const observer = combineObservers(summary, {
    recordIn: () => {
      if (first !== undefined) return;
      first = performance.now();
      meter = cpuMeter();
    },
  });
  const enrichment = await createKafkaEnrichment(config, observer);
  await enrichment.pipeline.start();
  ready();
  await until(
    () => summary.finished >= job.count || enrichment.pipeline.failure !== undefined,
    () => `pipeline: ${summary.finished} of ${job.count} finished`,
    30 * 60_000,
  );
  if (enrichment.pipeline.failure) throw enrichment.pipeline.failure;
  // finished counts records whose outputs are being written; idle() waits for the acks.
  await enrichment.pipeline.idle();
  const elapsedMs = performance.now() - (first ?? performance.now());
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
    },
  };
}
