// 7. State: how long a restarted replica takes to be ready when its partitions hold 2,000,000
// stored partners. The storage topic (the partner state's changelog) is filled directly with
// StorageRecords; the input topic stays empty, so what is timed is the start and the restore
// alone. Each run starts the real CLI (`partner-enrich run`) twice on one state directory:
// cold (an empty disk: every partition restored from the whole storage topic) and warm (the
// checkpoints its first stop wrote: only the tail is read). A plain kafkajs consumer reading
// the same topic to its end, in the same run, is the baseline of the restore rate.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerTopicEncoder } from '../../src/kafka/avro-encoder.ts';
import { TopicReaders } from '../../src/kafka/topic-reader.ts';
import { contentHash, toJsonRecord } from '../../src/mapping/lookup-task.ts';
import { benchSandbox, type BenchContext } from '../support/context.ts';
import { POOL } from '../support/drain.ts';
import { distinctPartner, produceBacklog, upstream } from '../support/partners.ts';
import { metric, runEnvironment, startRunProcess } from '../support/run-process.ts';
import { spread, type Spread } from '../support/stats.ts';
import {
  createOutputTopics,
  createTopics,
  deleteTopics,
  pipelineTopics,
  uniqueName,
} from '../support/topics.ts';

const READY_TIMEOUT_MS = 15 * 60_000;
const STOP_TIMEOUT_MS = 120_000;

/** One start of the CLI, from spawn to its exit after SIGTERM. */
export interface StartResult {
  /** From spawn to the first 200 of GET /readyz. */
  readyMs: number;
  /** The child's VmHWM read just before it was stopped: the peak of its start and restore. */
  peakRssMb: number;
  /** partner_enrich_state_restore_records_total, summed over the partitions. */
  restoredRecords: number;
  /** partner_enrich_state_restore_seconds, the longest of the partitions' restores. */
  restoreSeconds: number;
  /** partner_enrich_state_partners and _state_store_bytes once ready. */
  partners: number;
  storeMb: number;
  /** From SIGTERM to exit (the stop writes the checkpoints). */
  stopMs: number;
}

export interface StateRun {
  cold: StartResult;
  warm: StartResult;
  /** Records/s of the plain kafkajs consumer reading the whole storage topic. */
  rawRecordsPerSecond: number;
  /** Records/s of the cold restore (records restored / restore seconds). */
  restoreRecordsPerSecond: number;
}

export interface StateResult {
  partners: number;
  /** Mean size of a StorageRecord value (Confluent wire format), in bytes. */
  recordBytes: number;
  produceSeconds: number;
  coldReadySeconds: Spread;
  warmReadySeconds: Spread;
  coldPeakRssMb: Spread;
  warmPeakRssMb: Spread;
  restoreRate: Spread;
  rawRate: Spread;
  /** Cold restore rate / raw consumer rate, per run. */
  restoreVsRaw: Spread;
  warmRestoredRecords: Spread;
  runs: StateRun[];
}

const OUTCOMES = ['MATCH', 'MAYBE_MATCH', 'NO_MATCH'] as const;

/** The storage topic as partner-enrich leaves it after matching `count` distinct partners. */
export async function produceStorage(context: BenchContext, topic: string, count: number) {
  const encoder = await registerTopicEncoder({ url: context.registryUrl }, topic, 'StorageRecord');
  const pool = upstream(POOL);
  const hashes = pool.map((partner) => contentHash(toJsonRecord(partner)));
  const matchedAt = Date.now();
  let bytes = 0;
  const started = performance.now();
  await produceBacklog(context.kafka, topic, count, (i) => {
    const record = distinctPartner(pool, i);
    const outcome = OUTCOMES[i % OUTCOMES.length] as (typeof OUTCOMES)[number];
    const svcId = outcome === 'NO_MATCH' ? null : `GLEIF:${String(i % 100_000).padStart(20, '0')}`;
    const value = encoder.encode({
      partnerId: record.partnerId,
      record,
      contentHash: hashes[i % hashes.length],
      svcId,
      outcome,
      bestCandidate: svcId
        ? { svcId, score: 0.91, dataSource: 'GLEIF', name: record.names[0] ?? null }
        : null,
      matchedAt,
    });
    bytes += value.length;
    return { key: record.partnerId, value };
  });
  return { recordBytes: Math.round(bytes / count), produceMs: performance.now() - started };
}

/** Starts `partner-enrich run`, waits for /readyz, reads its metrics and peak RSS, stops it. */
async function startAndStop(env: Record<string, string>, label: string): Promise<StartResult> {
  const cli = await startRunProcess(env, `state-${label}`);
  try {
    const readyMs = await cli.ready(READY_TIMEOUT_MS);
    const text = await cli.metrics();
    const peakRssMb = await cli.peakRssMb();
    const stopMs = await cli.stop(STOP_TIMEOUT_MS);
    return {
      readyMs,
      peakRssMb,
      restoredRecords: metric(text, 'partner_enrich_state_restore_records_total'),
      restoreSeconds: metric(text, 'partner_enrich_state_restore_seconds', 'max'),
      partners: metric(text, 'partner_enrich_state_partners'),
      storeMb: metric(text, 'partner_enrich_state_store_bytes') / 1024 / 1024,
      stopMs,
    };
  } finally {
    await cli.kill();
  }
}

const mb = (n: number) => `${n.toFixed(0)} MB`;

export async function stateRestart(context: BenchContext): Promise<StateResult> {
  const partners = context.count(2_000_000);
  const input = uniqueName('state-in');
  await createTopics(context.kafka, [{ topic: input }]);
  const topics = pipelineTopics('state', input);
  const created = [input, ...(await createOutputTopics(context.kafka, topics))];
  // The input is empty: the sandbox is never asked anything, it only has to exist.
  const sandbox = await benchSandbox();
  try {
    const produced = await produceStorage(context, topics.storage, partners);
    context.log(
      `storage: ${partners} StorageRecords (${produced.recordBytes} B each) produced in ${(produced.produceMs / 1000).toFixed(0)} s`,
    );
    const runs: StateRun[] = [];
    for (let run = 1; run <= context.runs; run += 1) {
      const rawStarted = performance.now();
      const read = await new TopicReaders(context.kafka).readToEnd(topics.storage, () => {});
      const rawRecordsPerSecond = read / ((performance.now() - rawStarted) / 1000);
      const dir = await mkdtemp(join(tmpdir(), 'bench-state-'));
      try {
        const env = {
          ...runEnvironment(context, sandbox.url, topics, uniqueName('state')),
          PARTNER_ENRICH_STATE__DIR: dir,
        };
        const cold = await startAndStop(env, 'cold');
        const warm = await startAndStop(env, 'warm');
        const restoreRecordsPerSecond = cold.restoredRecords / cold.restoreSeconds;
        runs.push({ cold, warm, rawRecordsPerSecond, restoreRecordsPerSecond });
        context.log(
          `run ${run}: raw consumer ${rawRecordsPerSecond.toFixed(0)} records/s; ` +
            `cold: ready in ${(cold.readyMs / 1000).toFixed(1)} s, ${cold.restoredRecords} records restored in ${cold.restoreSeconds.toFixed(1)} s ` +
            `(${restoreRecordsPerSecond.toFixed(0)}/s), peak RSS ${mb(cold.peakRssMb)}, store ${mb(cold.storeMb)}, stop ${(cold.stopMs / 1000).toFixed(1)} s; ` +
            `warm: ready in ${(warm.readyMs / 1000).toFixed(2)} s, ${warm.restoredRecords} records restored, peak RSS ${mb(warm.peakRssMb)}, stop ${(warm.stopMs / 1000).toFixed(1)} s`,
        );
        if (cold.partners !== partners || warm.partners !== partners)
          throw new Error(
            `state holds ${cold.partners} (cold) and ${warm.partners} (warm) of ${partners} partners`,
          );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    return {
      partners,
      recordBytes: produced.recordBytes,
      produceSeconds: produced.produceMs / 1000,
      coldReadySeconds: spread(runs.map((r) => r.cold.readyMs / 1000)),
      warmReadySeconds: spread(runs.map((r) => r.warm.readyMs / 1000)),
      coldPeakRssMb: spread(runs.map((r) => r.cold.peakRssMb)),
      warmPeakRssMb: spread(runs.map((r) => r.warm.peakRssMb)),
      restoreRate: spread(runs.map((r) => r.restoreRecordsPerSecond)),
      rawRate: spread(runs.map((r) => r.rawRecordsPerSecond)),
      restoreVsRaw: spread(runs.map((r) => r.restoreRecordsPerSecond / r.rawRecordsPerSecond)),
      warmRestoredRecords: spread(runs.map((r) => r.warm.restoredRecords)),
      runs,
    };
  } finally {
    await sandbox.close();
    await deleteTopics(context.kafka, created);
  }
}
