// 9. Scale-out: one backlog drained by one `partner-enrich run` process, then by two in one
// consumer group (the real CLI, as replicas run), each drain on fresh topics (6 partitions)
// and a fresh group. Two regimes, in the same run:
// - latency-bound: every sandbox request answered after LATENCY_MS, so that a replica is held
//   by its bulks in flight (batching.maxConcurrentBulks bulks of batching.maxTasks, each
//   waiting for its quota consume, create and read), as a deployment is by the reference
//   service; its CPU busy share is reported to show that it is not CPU-bound;
// - CPU-bound: the instant sandbox, where one replica is held by its own CPU and two replicas
//   share this machine's two cores with the broker, the sandbox and each other.
// The replicas start on the empty input; the backlog is produced once each of them holds its
// partitions and is ready, so that neither start-up nor the group's join is timed. The drain
// runs from the produce's start to the last MatchResult (LogAppendTime, the same clock): from
// the first MatchResult on instead, a replica's first bulk round would be left out, which
// flatters the shorter drain of two; each replica's CPU is its own accounting
// (process_cpu_seconds_total on its /metrics) over the drain.
import { loadavg } from 'node:os';
import { AssignerProtocol, type Admin, type Message } from 'kafkajs';
import { TopicReaders } from '../../src/kafka/topic-reader.ts';
import type { RunningSandbox } from '../../src/sandbox/index.ts';
import { benchSandbox, type BenchContext } from '../support/context.ts';
import { drainWithPipeline, encodeDistinct, produceDistinct } from '../support/drain.ts';
import { produceBacklog } from '../support/partners.ts';
import { brokerCpuMeter, cpuMeter } from '../support/process-stats.ts';
import { metric, runEnvironment, startRunProcess, type RunProcess } from '../support/run-process.ts';
import { spread, type Spread } from '../support/stats.ts';
import { createOutputTopics, deleteTopics, pipelineTopics, uniqueName } from '../support/topics.ts';

const PARTITIONS = 6;
/** Per sandbox request; BENCH_SCALE_LATENCY_MS changes it. */
const LATENCY_MS = Number(process.env.BENCH_SCALE_LATENCY_MS ?? 1_000);
const SETTLE_TIMEOUT_MS = 120_000;
const DRAIN_TIMEOUT_MS = 10 * 60_000;
const STOP_TIMEOUT_MS = 60_000;
const POLL_MS = 250;
/**
 * Distinct lookup contents the backlog cycles through: few enough for a short warm-up of the
 * sandbox's outcome cache (the throughput backlogs' 20,000 take a minute or more cold).
 */
const CONTENTS = 2_000;

/** One replica's own accounting over a drain. */
export interface ReplicaFigures {
  /** Records it finished (partner_enrich_records_out_total). */
  records: number;
  cpuMs: number;
  cpuUsPerRecord: number;
  /** cpuMs over the drain's span: the share of one core it kept busy. */
  busyShare: number;
  bulks: number;
  /** Mean from a bulk's submission to its last result page (partner_enrich_bulk_latency_seconds). */
  meanBulkSeconds: number;
}

export interface DrainFigures {
  replicas: number;
  /** Partners with a MatchResult (each backlog record is a partner of its own). */
  partnersMatched: number;
  matches: number;
  /** From the start of the produce to the last MatchResult appended. */
  spanMs: number;
  /** From the start of the produce to the first MatchResult: about one bulk round. */
  firstMatchMs: number;
  recordsPerSecond: number;
  /** Share of both cores busy over the drain (everything on the machine). */
  machineBusy: number;
  /** The machine's 1-minute load average when the drain ended: other work on it. */
  loadAverage: number;
  /** CPU of this process over the drain: the sandbox, the producer, the offset polls. */
  orchestratorCpuMs: number;
  brokerCpuMs?: number;
  perReplica: ReplicaFigures[];
}

export interface RegimeResult {
  /** Added to every sandbox request (0: the instant sandbox). */
  latencyMs: number;
  one: Spread;
  two: Spread;
  /** Two replicas' rate over one's, within each run. */
  ratio: Spread;
  /** CPU µs per record: the single replica; both replicas together. */
  cpuUsPerRecordOne: Spread;
  cpuUsPerRecordTwo: Spread;
  /** Busy share of one core: the single replica; the busier of the two. */
  busyOne: Spread;
  busyTwo: Spread;
  runs: { one: DrainFigures; two: DrainFigures }[];
}

export interface ScaleResult {
  records: number;
  partitions: number;
  latencyBound: RegimeResult;
  cpuBound: RegimeResult;
}

interface Accounting {
  cpuMs: number;
  records: number;
  bulks: number;
  bulkSeconds: number;
}

async function accounting(replica: RunProcess): Promise<Accounting> {
  const text = await replica.metrics();
  return {
    cpuMs: metric(text, 'partner_enrich_process_cpu_seconds_total') * 1000,
    records: metric(text, 'partner_enrich_records_out_total'),
    bulks: metric(text, 'partner_enrich_bulk_latency_seconds_count'),
    bulkSeconds: metric(text, 'partner_enrich_bulk_latency_seconds_sum'),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function failIfExited(replicas: RunProcess[]): void {
  const gone = replicas.find((replica) => replica.exited());
  if (gone) throw new Error(`partner-enrich (${gone.label}) exited during the drain`);
}

/** Input partitions held by each member, once the group is stable; undefined while it is not. */
async function assignment(admin: Admin, groupId: string, topic: string): Promise<number[] | undefined> {
  const { groups } = await admin.describeGroups([groupId]);
  const group = groups[0];
  if (group?.state !== 'Stable') return undefined;
  return group.members.map(
    (member) =>
      AssignerProtocol.MemberAssignment.decode(member.memberAssignment)?.assignment[topic]?.length ?? 0,
  );
}

/** Resolves once every replica is ready and holds part of the input, the whole input assigned. */
async function settled(admin: Admin, replicas: RunProcess[], groupId: string, topic: string) {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  let last: number[] | undefined;
  for (;;) {
    failIfExited(replicas);
    last = await assignment(admin, groupId, topic);
    const shared = last?.length === replicas.length && last.every((n) => n > 0);
    const whole = last?.reduce((a, b) => a + b, 0) === PARTITIONS;
    if (shared && whole && (await Promise.all(replicas.map((r) => r.isReady()))).every(Boolean)) return;
    if (Date.now() > deadline)
      throw new Error(`group ${groupId} not settled: partitions per member ${JSON.stringify(last)}`);
    await sleep(POLL_MS);
  }
}

async function committedRecords(admin: Admin, groupId: string, topic: string): Promise<number> {
  const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
  return (offsets?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
}

async function allCommitted(
  admin: Admin,
  replicas: RunProcess[],
  groupId: string,
  topic: string,
  count: number,
) {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  for (;;) {
    failIfExited(replicas);
    const committed = await committedRecords(admin, groupId, topic);
    if (committed >= count) return;
    if (Date.now() > deadline) throw new Error(`drain: ${committed} of ${count} records committed`);
    await sleep(POLL_MS);
  }
}

/** MatchResults on the topic: how many, for how many partners, their first and last append since `from`. */
async function matchResults(context: BenchContext, topic: string, from: number) {
  const partners = new Set<string>();
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  const matches = await new TopicReaders(context.kafka).readToEnd(topic, (message) => {
    partners.add(message.key?.toString() ?? '');
    const appended = Number(message.timestamp);
    first = Math.min(first, appended);
    last = Math.max(last, appended);
  });
  return { matches, partnersMatched: partners.size, firstMatchMs: first - from, spanMs: last - from };
}

/** `count` records drained by `replicas` run processes in one group, on topics of their own. */
async function drain(
  context: BenchContext,
  sandbox: RunningSandbox,
  replicas: number,
  count: number,
  label: string,
): Promise<DrainFigures> {
  // The input is created with the others, as many partitions as the storage (co-partitioned).
  const topics = { ...pipelineTopics('scale', uniqueName('scale-in')), partitions: PARTITIONS };
  const { input } = topics;
  const created = [input];
  const processes: RunProcess[] = [];
  const admin = context.kafka.admin();
  await admin.connect();
  try {
    created.push(
      ...(await createOutputTopics(context.kafka, topics, [
        { name: 'message.timestamp.type', value: 'LogAppendTime' },
      ])),
    );
    const messages = await encodeDistinct(context, input, count, CONTENTS);
    const groupId = uniqueName('scale');
    const env = runEnvironment(context, sandbox.url, topics, groupId);
    for (let i = 1; i <= replicas; i += 1)
      processes.push(await startRunProcess(env, `scale-${label}-${i}-of-${replicas}`));
    await settled(admin, processes, groupId, input);
    const before = await Promise.all(processes.map(accounting));
    const here = cpuMeter();
    const broker = brokerCpuMeter();
    const producedFrom = Date.now();
    await produceBacklog(context.kafka, input, count, (i) => messages[i] as Message);
    await allCommitted(admin, processes, groupId, input, count);
    const after = await Promise.all(processes.map(accounting));
    const { machineBusy, processMs: orchestratorCpuMs } = here();
    const brokerCpuMs = broker();
    const [loadAverage = 0] = loadavg();
    await Promise.all(processes.map((replica) => replica.stop(STOP_TIMEOUT_MS)));
    const read = await matchResults(context, topics.matches, producedFrom);
    if (read.partnersMatched !== count)
      throw new Error(`${read.partnersMatched} of ${count} partners have a MatchResult`);
    const perReplica = after.map((end, i): ReplicaFigures => {
      const start = before[i] as Accounting;
      const records = end.records - start.records;
      const cpuMs = end.cpuMs - start.cpuMs;
      const bulks = end.bulks - start.bulks;
      return {
        records,
        cpuMs,
        cpuUsPerRecord: (cpuMs * 1000) / records,
        busyShare: cpuMs / read.spanMs,
        bulks,
        meanBulkSeconds: (end.bulkSeconds - start.bulkSeconds) / bulks,
      };
    });
    return {
      replicas,
      ...read,
      recordsPerSecond: count / (read.spanMs / 1000),
      machineBusy,
      loadAverage,
      orchestratorCpuMs,
      ...(brokerCpuMs === undefined ? {} : { brokerCpuMs }),
      perReplica,
    };
  } finally {
    await Promise.all(processes.map((replica) => replica.kill()));
    await admin.disconnect();
    // The sandbox keeps every bulk it was sent; none is in flight between drains.
    sandbox.state.bulks.clear();
    await deleteTopics(context.kafka, created);
  }
}

function describe(drain: DrainFigures): string {
  const replicas = drain.perReplica
    .map(
      (r) =>
        `${r.records} records, ${r.cpuUsPerRecord.toFixed(0)} µs CPU each, ${(r.busyShare * 100).toFixed(0)}% busy, bulks ${r.meanBulkSeconds.toFixed(2)} s`,
    )
    .join('; ');
  const machine = `machine ${(drain.machineBusy * 100).toFixed(0)}% busy, load ${drain.loadAverage.toFixed(1)}`;
  const orchestrator = `sandbox process ${((drain.orchestratorCpuMs / drain.spanMs) * 100).toFixed(0)}% busy`;
  const first = `first MatchResult after ${(drain.firstMatchMs / 1000).toFixed(1)} s`;
  return `${drain.replicas} replica(s) ${drain.recordsPerSecond.toFixed(0)} records/s (${first}; ${replicas}; ${orchestrator}; ${machine})`;
}

async function regime(
  context: BenchContext,
  sandbox: RunningSandbox,
  count: number,
  latencyMs: number,
): Promise<RegimeResult> {
  const label = latencyMs > 0 ? `${latencyMs}ms` : 'instant';
  sandbox.state.faults.update({ latencyMs });
  const runs: RegimeResult['runs'] = [];
  for (let run = 1; run <= context.runs; run += 1) {
    const one = await drain(context, sandbox, 1, count, label);
    const two = await drain(context, sandbox, 2, count, label);
    runs.push({ one, two });
    context.log(
      `${label} run ${run}: ${describe(one)}; ${describe(two)}; ratio ${(two.recordsPerSecond / one.recordsPerSecond).toFixed(2)}`,
    );
  }
  const usPerRecord = (drain: DrainFigures) =>
    (drain.perReplica.reduce((sum, r) => sum + r.cpuMs, 0) * 1000) /
    drain.perReplica.reduce((sum, r) => sum + r.records, 0);
  const busiest = (drain: DrainFigures) => Math.max(...drain.perReplica.map((r) => r.busyShare));
  return {
    latencyMs,
    one: spread(runs.map((r) => r.one.recordsPerSecond)),
    two: spread(runs.map((r) => r.two.recordsPerSecond)),
    ratio: spread(runs.map((r) => r.two.recordsPerSecond / r.one.recordsPerSecond)),
    cpuUsPerRecordOne: spread(runs.map((r) => usPerRecord(r.one))),
    cpuUsPerRecordTwo: spread(runs.map((r) => usPerRecord(r.two))),
    busyOne: spread(runs.map((r) => busiest(r.one))),
    busyTwo: spread(runs.map((r) => busiest(r.two))),
    runs,
  };
}

export async function scaleOut(context: BenchContext): Promise<ScaleResult> {
  const sandbox = await benchSandbox();
  const records = context.count(40_000);
  const warmup = await produceDistinct(context, 'scale-warmup', CONTENTS, CONTENTS);
  try {
    // Fills the sandbox's outcome cache: the drains measure partner-enrich, not the matcher.
    await drainWithPipeline(context, sandbox, warmup.topic, CONTENTS);
    const latencyBound = await regime(context, sandbox, records, LATENCY_MS);
    const cpuBound = await regime(context, sandbox, records, 0);
    return { records, partitions: PARTITIONS, latencyBound, cpuBound };
  } finally {
    await deleteTopics(context.kafka, [warmup.topic]);
    await sandbox.close();
  }
}
