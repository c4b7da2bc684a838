// 8. Rerun beside live traffic: live records at a steady rate R while a rerun looks every
// stored partner (100,000 at scale 1) up again under a quota shared with them. One
// partner-enrich process per run, under a steady live load from start to end: first the live
// load alone (the baseline), then a rerun job is written to the state topic, as
// `rerun start` or a schedule writes it, and the process's executor runs it until every input
// partition's share is done; the live load stops then. The quota (Q per window W) is the
// binding limit, as a reference service's quota is in production: sized well under what
// one process on this machine can look up (about 1,000 records/s), so that it, not the
// CPU, decides the rates. The live load alone uses 40 % of each window; the rerun may take
// up to 70 % (its quotaShare), and only what live leaves.
// Figures: live latency (input timestamp -> MatchResult LogAppendTime, MatchResults without
// a rerun id) of both phases and their ratio; the rerun's partners/s; the share of Q used
// per full window of each phase; live records whose latency passed one window.
import { setTimeout as sleep } from 'node:timers/promises';
import { KafkaRerunJobStore } from '../../src/kafka/rerun-store.ts';
import type { RerunCounts, RerunJob, RerunPartitionProgress } from '../../src/rerun/rerun-job.ts';
import { setOrganizationQuota } from '../../src/sandbox/index.ts';
import { pipelineSchema } from '../../src/serde/schemas.ts';
import { TopicReaders } from '../../src/kafka/topic-reader.ts';
import { pipelineConfig, type BenchContext } from '../support/context.ts';
import type { WorkerResult } from '../support/jobs.ts';
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
import { startSandboxProcess, type SandboxProcess } from '../support/sandbox-process.ts';
import { fullWindows, QUOTA_BACKOFF, type Consume, type WindowUse } from './quota.ts';
import { produceStorage } from './state.ts';

export const WINDOW_MS = 2_000;
export const QUOTA = 1_400;
/** Live records/s: 40 % of the quota's rate, or BENCH_RERUN_LIVE_RATE. */
const liveRate = (): number => Number(process.env.BENCH_RERUN_LIVE_RATE) || (QUOTA * 400) / WINDOW_MS;
/** The rerun's most of each window (job.quotaShare); it takes only what the live load leaves. */
export const QUOTA_SHARE = 0.7;
const BATCH_SIZE = 500;
/** Left out of the baseline: the process's first seconds (connections, JIT, first bulks). */
const WARMUP_MS = 5_000;

interface Latencies {
  records: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** Live records whose latency passed one quota window. */
  pastWindow: number;
}

export interface RerunRun {
  baseline: Latencies;
  beside: Latencies;
  /** beside.p95 / baseline.p95. */
  p95Ratio: number;
  rerun: {
    partners: number;
    /** From the job's write to the last partition's share done. */
    seconds: number;
    partnersPerSecond: number;
    /** MatchResults with the job's rerun id. */
    results: number;
    counts: RerunCounts;
  };
  /** Share of Q used per full window: the live load alone, then beside the rerun. */
  baselineWindows: WindowUse[];
  besideWindows: WindowUse[];
  /** The rerun's MatchResults appended in each of those windows beside it, as a share of Q. */
  rerunWindowShares: number[];
  liveRate: number;
  worker: WorkerResult['details'];
}

export interface RerunResult {
  partners: number;
  liveRate: number;
  quota: number;
  windowMs: number;
  quotaShare: number;
  baselineSeconds: number;
  baselineP95: Spread;
  besideP95: Spread;
  baselineP50: Spread;
  besideP50: Spread;
  besideP99: Spread;
  p95Ratio: Spread;
  rerunPartnersPerSecond: Spread;
  rerunSeconds: Spread;
  /** Over the full windows of every run's rerun phase. */
  besideWindowUse: Spread;
  besideWindowMean: number;
  /** Full windows of the rerun phases at least 98 % used, and all of them. */
  besideWindowsFull: { full: number; of: number };
  baselineWindowUse: Spread;
  /** Live records of the rerun phase whose latency passed one window, per run. */
  pastWindow: Spread;
  runs: RerunRun[];
}

/** A window this much used counts as fully used (the quota benchmark's target). */
export const FULL = 0.98;
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

const matchResult = pipelineSchema('MatchResult').type;

function latencies(values: number[], windowMs: number): Latencies {
  values.sort((a, b) => a - b);
  return {
    records: values.length,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    p99: percentile(values, 99),
    max: values.at(-1) ?? Number.NaN,
    pastWindow: values.filter((v) => v > windowMs).length,
  };
}

/** Full windows of the consumes between `from` and `to` (the partial ones at both ends left out). */
const windowsBetween = (consumes: Consume[], from: number, to: number): WindowUse[] =>
  fullWindows(
    consumes.filter((c) => c.at >= from && c.at < to),
    WINDOW_MS,
  );

const sum = (progress: Iterable<RerunPartitionProgress>): RerunCounts => {
  const total = { read: 0, lookedUp: 0, changed: 0, unchanged: 0, failed: 0, superseded: 0 };
  for (const share of progress)
    for (const key of Object.keys(total) as (keyof RerunCounts)[]) total[key] += share.counts[key];
  return total;
};

async function oneRun(
  context: BenchContext,
  sandbox: SandboxProcess,
  partners: number,
  baselineMs: number,
): Promise<RerunRun> {
  const input = uniqueName('rerun-in');
  await createTopics(context.kafka, [{ topic: input }]);
  const topics = pipelineTopics('rerun', input);
  const created = [
    input,
    ...(await createOutputTopics(context.kafka, topics, [
      { name: 'message.timestamp.type', value: 'LogAppendTime' },
    ])),
  ];
  const jobs = new KafkaRerunJobStore(new TopicReaders(context.kafka), topics.state);
  let unfollow: (() => Promise<void>) | undefined;
  // What the runs before this one consumed is left out.
  await sandbox.takeConsumes();
  try {
    await produceStorage(context, topics.storage, partners);
    // The stored partners' matchedAt is before this; every live partner's is after it.
    const storedBy = Date.now();
    await jobs.load();
    let changed = Promise.withResolvers<undefined>();
    unfollow = await jobs.follow(
      () => {
        changed.resolve(undefined);
        changed = Promise.withResolvers<undefined>();
      },
      (error) => changed.reject(error),
    );
    const worker = startWorker({
      kind: 'open-pipeline',
      config: pipelineConfig(context, sandbox.url, topics, { quota: QUOTA_BACKOFF }),
    });
    await Promise.race([worker.ready, worker.result]);
    const stopLoad = new AbortController();
    // Live partners are new ones, with ids after the stored partners'.
    const loading = steadyLoad(context, input, {
      rate: liveRate(),
      signal: stopLoad.signal,
      firstIndex: partners,
    });
    const loadStarted = Date.now();
    let rerunEnd: number;
    let job: RerunJob;
    try {
      await Promise.race([sleep(WARMUP_MS + baselineMs), worker.result]);
      const now = Date.now();
      job = {
        id: uniqueName('job'),
        inputTopic: input,
        // Without the filter the rerun would also read every live partner stored before it
        // ends, and never end while new live partners keep arriving after its cursor
        // (src/rerun/partition-rerun.ts scans to the state's end as it is at each chunk).
        filter: { notLookedUpSince: storedBy },
        batchSize: BATCH_SIZE,
        tags: ['bench'],
        initialize: false,
        dryRun: false,
        quotaShare: QUOTA_SHARE,
        control: 'run',
        createdAt: now,
        controlAt: now,
      };
      await jobs.saveJob(job);
      // At least the rerun's rate the quota allows, four times over.
      const deadline = now + 60_000 + (4 * partners * WINDOW_MS) / (QUOTA * QUOTA_SHARE);
      for (;;) {
        const shares = [...jobs.progress(job.id).values()];
        const died = shares.find((share) => share.error !== undefined);
        if (died) throw new Error(`rerun ${job.id} died on partition ${died.partition}: ${died.error}`);
        if (shares.length === topics.partitions && shares.every((share) => share.done)) {
          rerunEnd = Math.max(...shares.map((share) => share.finishedAt ?? share.updatedAt));
          break;
        }
        if (Date.now() > deadline)
          throw new Error(`rerun ${job.id} not done: ${JSON.stringify(sum(shares))}`);
        await Promise.race([changed.promise, sleep(1_000), worker.result]);
      }
    } finally {
      stopLoad.abort();
    }
    const load = await loading;
    worker.command({ type: 'finish', records: load.sent });
    const result = await worker.result;
    const consumes = await sandbox.takeConsumes();

    const baselineFrom = loadStarted + WARMUP_MS;
    const baseline: number[] = [];
    const beside: number[] = [];
    const rerunAppended: number[] = [];
    await new TopicReaders(context.kafka).readToEnd(topics.matches, (message) => {
      const value = matchResult.fromBuffer((message.value as Buffer).subarray(5)) as {
        partnerId: string;
        rerunId: string | null;
      };
      if (value.rerunId === job.id) rerunAppended.push(Number(message.timestamp));
      if (value.rerunId !== null) return;
      const createdAt = load.createdAt.get(value.partnerId);
      if (createdAt === undefined || createdAt < baselineFrom) return;
      const latency = Number(message.timestamp) - createdAt;
      (createdAt < job.createdAt ? baseline : beside).push(latency);
    });
    const rerunResults = rerunAppended.length;
    const besideWindows = windowsBetween(consumes, job.createdAt, rerunEnd);
    const perWindow = new Map<number, number>();
    for (const at of rerunAppended) {
      const key = Math.floor(at / WINDOW_MS);
      perWindow.set(key, (perWindow.get(key) ?? 0) + 1);
    }
    const firstFull = Math.floor(job.createdAt / WINDOW_MS) + 1;
    const counts = sum(jobs.progress(job.id).values());
    const seconds = (rerunEnd - job.createdAt) / 1000;
    const run: RerunRun = {
      baseline: latencies(baseline, WINDOW_MS),
      beside: latencies(beside, WINDOW_MS),
      p95Ratio: 0,
      rerun: {
        partners,
        seconds,
        partnersPerSecond: counts.read / seconds,
        results: rerunResults,
        counts,
      },
      baselineWindows: windowsBetween(consumes, baselineFrom, job.createdAt),
      besideWindows,
      rerunWindowShares: besideWindows.map((_, i) => (perWindow.get(firstFull + i) ?? 0) / QUOTA),
      liveRate: load.sent / load.seconds,
      worker: result.details,
    };
    run.p95Ratio = run.beside.p95 / run.baseline.p95;
    if (counts.read !== partners || rerunResults !== partners)
      throw new Error(
        `rerun read ${counts.read} and wrote ${rerunResults} MatchResults for ${partners} stored partners`,
      );
    return run;
  } finally {
    await sandbox.forgetBulks();
    await unfollow?.();
    await jobs.close();
    await deleteTopics(context.kafka, created);
  }
}

const shares = (windows: WindowUse[]) =>
  windows.map((w) => `${((w.used / QUOTA) * 100).toFixed(0)}%`).join(' ');

export async function rerunBesideLive(context: BenchContext): Promise<RerunResult> {
  const sandbox = await startSandboxProcess();
  const partners = context.count(100_000, 2_000);
  const baselineMs = Math.max(10, Math.round(30 * context.scale)) * 1_000;
  const runs: RerunRun[] = [];
  try {
    await setOrganizationQuota(sandbox.url, QUOTA, `PT${WINDOW_MS / 1000}S`);
    for (let n = 1; n <= context.runs; n += 1) {
      const run = await oneRun(context, sandbox, partners, baselineMs);
      runs.push(run);
      const { baseline: a, beside: b, rerun } = run;
      context.log(
        `run ${n}: live ${run.liveRate.toFixed(0)} records/s; without the rerun p50 ${a.p50} ms, p95 ${a.p95} ms, p99 ${a.p99} ms (${a.records} records); ` +
          `beside it p50 ${b.p50} ms, p95 ${b.p95} ms, p99 ${b.p99} ms, max ${b.max} ms (${b.records} records), p95 ratio ${run.p95Ratio.toFixed(2)}x, ` +
          `${b.pastWindow} past ${WINDOW_MS} ms (${a.pastWindow} without the rerun); rerun ${rerun.partners} partners in ${rerun.seconds.toFixed(1)} s (${rerun.partnersPerSecond.toFixed(0)}/s, ${rerun.counts.changed} changed)`,
      );
      context.log(`  Q used per full window, live alone: ${shares(run.baselineWindows)}`);
      context.log(`  Q used per full window, beside the rerun: ${shares(run.besideWindows)}`);
      context.log(
        `  the rerun's results per window, of Q: ${run.rerunWindowShares.map((s) => `${(s * 100).toFixed(0)}%`).join(' ')}`,
      );
    }
  } finally {
    await sandbox.close();
  }
  const use = (pick: (run: RerunRun) => WindowUse[]) =>
    spread(runs.flatMap((run) => pick(run).map((w) => w.used / QUOTA)));
  return {
    partners,
    liveRate: liveRate(),
    quota: QUOTA,
    windowMs: WINDOW_MS,
    quotaShare: QUOTA_SHARE,
    baselineSeconds: baselineMs / 1000,
    baselineP50: spread(runs.map((r) => r.baseline.p50)),
    baselineP95: spread(runs.map((r) => r.baseline.p95)),
    besideP50: spread(runs.map((r) => r.beside.p50)),
    besideP95: spread(runs.map((r) => r.beside.p95)),
    besideP99: spread(runs.map((r) => r.beside.p99)),
    p95Ratio: spread(runs.map((r) => r.p95Ratio)),
    rerunPartnersPerSecond: spread(runs.map((r) => r.rerun.partnersPerSecond)),
    rerunSeconds: spread(runs.map((r) => r.rerun.seconds)),
    besideWindowUse: use((run) => run.besideWindows),
    besideWindowMean: mean(use((run) => run.besideWindows).runs),
    besideWindowsFull: {
      full: use((run) => run.besideWindows).runs.filter((u) => u >= FULL).length,
      of: use((run) => run.besideWindows).runs.length,
    },
    baselineWindowUse: use((run) => run.baselineWindows),
    pastWindow: spread(runs.map((r) => r.beside.pastWindow)),
    runs,
  };
}
