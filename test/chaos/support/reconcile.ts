// The exact account of a scenario, from what is in the topics and what the sandbox accepted,
// read independently of the pipeline's code: every input position has a MatchResult or a dead
// letter (else it is LOST), duplicates by cause, commits against end offsets, and tasks and
// quota paid beyond the lookups needed.
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { Kafka } from 'kafkajs';
import type { Expected } from './input.ts';
import { lookupAccount, type LookupAccount, type ResultSeen } from './lookups.ts';
import type { SandboxTotals } from './sandbox-process.ts';
import { readWholeTopic, type ReadMessage } from './topic-reader.ts';

export interface Topics {
  input: string;
  matches: string;
  deadLetters: string;
  state: string;
}

/** When a process died without finishing its work: a pipeline SIGKILL or exit, a broker kill. */
export interface Disruption {
  at: number;
  what: string;
}

export interface ReconcileInput {
  kafka: Kafka;
  registry: SchemaRegistry;
  topics: Topics;
  groupId: string;
  /** What each input key should become. */
  expected: Map<string, Expected>;
  sandbox: SandboxTotals;
  disruptions: Disruption[];
}

interface Output {
  kind: 'match' | 'dead-letter';
  bulkId: string | null;
  reused: boolean;
  code?: string;
}

export type DuplicateCause =
  /** Read again after a kill; its bulk (already paid) read again, no new payment. */
  | 'reReadSameBulk'
  /** Read again; the stored result reused, no lookup. */
  | 'reReadReused'
  /** Looked up in two different bulks: paid twice. */
  | 'differentBulks'
  | 'deadLetteredAgain'
  | 'matchAndDeadLetter';

export type PaidTwiceCause =
  /** The same task id in a later bulk: the pipeline resubmitted work whose first bulk it gave up on. */
  | 'retry'
  /** A process died between the two submissions, and the first bulk was in the ledger before it died: the restart did not find it. */
  | 'ledgerNotConsulted'
  /** A process died between the two submissions before the first bulk was in the ledger. */
  | 'kill'
  /** Nothing died in between: two owners of the same records (rebalance). */
  | 'rebalance';

export interface PaidTwiceExample {
  contentKey: string;
  cause: PaidTwiceCause;
  first: { bulkId: string; createdAt: number; tasks: number; recordedAfterMs: number | null };
  again: { bulkId: string; afterMs: number; tasks: number };
  disruptionsAfterMs: { afterMs: number; what: string }[];
}

export interface Reconciliation {
  input: { records: number; match: number; deadLetter: number; oversize: number };
  lost: number;
  lostSample: string[];
  validDeadLettered: Record<string, number>;
  malformedMatched: number;
  duplicates: { positions: number; extraOutputs: number; byCause: Record<DuplicateCause, number> };
  commits: { atEnd: boolean; behind: Record<string, number> };
  payment: {
    bulks: number;
    tasks: number;
    lookupsNeeded: number;
    distinctContentsPaid: number;
    tasksBeyondNeeded: number;
    quotaConsumed: number;
    quotaBeyondNeeded: number;
    paidTwice: { contents: number; tasks: number; byCause: Record<PaidTwiceCause, number> };
    /** The first few contents paid twice, with what the cause was decided on (ms from the first bulk's creation). */
    paidTwiceSample: PaidTwiceExample[];
    killWindows: KillWindows;
  };
  /** Payment against the lookups needed when partners come in several versions (lookups.ts). */
  lookups: LookupAccount;
  /** The state topic's messages about the records of the first contents paid beyond need, in order: why they were. */
  ledgerTrail: LedgerTrailEntry[];
}

/**
 * What the kill windows of GUARANTEES.md ("What remains") cost: a process that dies between the
 * service's answer and the state topic's record of it leaves a bulk its successor does not know
 * (looked up again) or a consume it does not know (consumed again). Counted only for answers
 * at most KILL_WINDOW_MS before a replica died, so that a slow record shows as a failure.
 */
export interface KillWindows {
  /** Bulks created in a window, never recorded in the ledger, whose contents were looked up again. */
  bulks: number;
  /** Their tasks looked up again (no unit consumed for them: the first bulk's was). */
  tasksAgain: number;
  /** Consumes answered in a window. */
  consumes: number;
  /** Their units: at most what was consumed again for records of an intent not yet marked paid. */
  units: number;
}

/**
 * The windows last a few milliseconds: the service's answer on its way back, and one state-topic
 * write. Measured in six kill-coalescing runs (each from request to answer, then to the write's
 * acknowledgement): a create 4-6 ms median, 55 ms at most, and its record 6-7 ms, 25 ms at most;
 * the paid intent after a consume 4-6 ms median, 69 ms at most.
 */
export const KILL_WINDOW_MS = 200;

/**
 * Whether a service answer stamped `at` (a bulk's creation, a consume) lies in a kill window:
 * a replica died at most KILL_WINDOW_MS after it, or as much before it. The sandbox stamps a
 * creation once it has read and checked the request, which a replica killed with its request
 * in flight no longer waits for: in CI at 39e6132 (`scale-1-3-1-sigkill`) a 71-task bulk was
 * stamped 1-44 ms after the second of two kills 10 ms apart, never recorded, and counted as paid twice by a rebalance.
 */
const inKillWindow = (deaths: number[], at: number): boolean =>
  deaths.some((death) => Math.abs(death - at) <= KILL_WINDOW_MS);

export interface LedgerTrailEntry {
  key: string | null;
  at: number;
  partition: number;
  offset: string;
  submissionId?: string;
  bulkId?: string;
  leaseUntil?: number;
  /** Of the watched records, those this entry names. */
  positions: string[];
}

const header = (value: Buffer | string | (Buffer | string)[] | undefined): string | undefined =>
  value === undefined ? undefined : String(Array.isArray(value) ? value[0] : value);

export async function committedBehind(
  kafka: Kafka,
  groupId: string,
  topic: string,
): Promise<Record<string, number>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [ends, committed] = await Promise.all([
      admin.fetchTopicOffsets(topic),
      admin.fetchOffsets({ groupId, topics: [topic] }),
    ]);
    const at = new Map(committed[0]?.partitions.map((p) => [p.partition, Number(p.offset)]) ?? []);
    return Object.fromEntries(
      ends.map((p) => [String(p.partition), Number(p.high) - Math.max(at.get(p.partition) ?? 0, 0)]),
    );
  } finally {
    await admin.disconnect();
  }
}

export async function reconcile(input: ReconcileInput): Promise<Reconciliation> {
  const { kafka, registry, topics } = input;
  const [inputs, matches, deadLetters, ledger] = await Promise.all([
    readWholeTopic(kafka, topics.input),
    readWholeTopic(kafka, topics.matches),
    readWholeTopic(kafka, topics.deadLetters),
    readWholeTopic(kafka, topics.state),
  ]);

  const outputs = new Map<string, Output[]>();
  const results: ResultSeen[] = [];
  const add = (position: string, output: Output) => {
    const list = outputs.get(position) ?? [];
    list.push(output);
    outputs.set(position, list);
  };
  for (const message of matches) {
    if (message.value === null) continue;
    const result = (await registry.decode(message.value)) as {
      source: { topic: string; partition: number; offset: number | bigint };
      bulkId: string | null;
      reused: boolean;
    };
    if (result.source.topic !== topics.input) continue;
    const position = `${result.source.partition}:${Number(result.source.offset)}`;
    results.push({ position, bulkId: result.bulkId, reused: result.reused });
    add(position, {
      kind: 'match',
      bulkId: result.bulkId,
      reused: result.reused,
    });
  }
  for (const message of deadLetters) {
    const h = message.headers ?? {};
    if (header(h['pe.origin.topic']) !== topics.input) continue;
    add(`${header(h['pe.origin.partition'])}:${header(h['pe.origin.offset'])}`, {
      kind: 'dead-letter',
      bulkId: null,
      reused: false,
      code: `${header(h['pe.stage'])}/${header(h['pe.error.code'])}`,
    });
  }

  const counts = { records: inputs.length, match: 0, deadLetter: 0, oversize: 0 };
  const lostSample: string[] = [];
  let lost = 0;
  let malformedMatched = 0;
  const validDeadLettered: Record<string, number> = {};
  const byCause: Record<DuplicateCause, number> = {
    reReadSameBulk: 0,
    reReadReused: 0,
    differentBulks: 0,
    deadLetteredAgain: 0,
    matchAndDeadLetter: 0,
  };
  let duplicatePositions = 0;
  let extraOutputs = 0;
  for (const message of inputs) {
    const position = `${message.partition}:${message.offset}`;
    const expected = input.expected.get(message.key?.toString('utf8') ?? '') ?? 'dead-letter';
    if (expected === 'match') counts.match += 1;
    else if (expected === 'oversize') counts.oversize += 1;
    else counts.deadLetter += 1;
    const found = outputs.get(position) ?? [];
    if (found.length === 0) {
      lost += 1;
      if (lostSample.length < 20) lostSample.push(position);
      continue;
    }
    const letters = found.filter((o) => o.kind === 'dead-letter');
    const results = found.filter((o) => o.kind === 'match');
    if (expected === 'match')
      for (const letter of letters)
        validDeadLettered[letter.code ?? '?'] = (validDeadLettered[letter.code ?? '?'] ?? 0) + 1;
    if (expected === 'dead-letter' && results.length > 0) malformedMatched += 1;
    if (found.length === 1) continue;
    duplicatePositions += 1;
    extraOutputs += found.length - 1;
    const bulks = new Set(results.filter((r) => !r.reused).map((r) => r.bulkId));
    if (letters.length > 0 && results.length > 0) byCause.matchAndDeadLetter += 1;
    else if (letters.length > 1) byCause.deadLetteredAgain += 1;
    else if (bulks.size > 1) byCause.differentBulks += 1;
    else if (results.some((r) => r.reused)) byCause.reReadReused += 1;
    else byCause.reReadSameBulk += 1;
  }

  const behind = await committedBehind(kafka, input.groupId, topics.input);
  const lookups = await lookupAccount({
    decode: (value) => registry.decode(value),
    inputs,
    results,
    bulks: input.sandbox.bulks,
    quotaConsumed: input.sandbox.quotaConsumed,
  });
  return {
    input: counts,
    lost,
    lostSample,
    validDeadLettered,
    malformedMatched,
    duplicates: { positions: duplicatePositions, extraOutputs, byCause },
    commits: { atEnd: Object.values(behind).every((n) => n === 0), behind },
    payment: payment(input, ledgerTimes(ledger), counts.match + counts.oversize),
    lookups,
    ledgerTrail: ledgerTrail(
      ledger,
      lookups.otherSample.slice(0, 3).flatMap((o) => o.records.map((r) => r.position)),
    ),
  };
}

/**
 * When each bulk was first recorded in the ledger: the state topic's message time of the first
 * entry naming it (entries are keyed by submission and partition; an intent names no bulk).
 */
function ledgerTimes(
  messages: { key: Buffer | null; value: Buffer | null; timestamp: string }[],
): Map<string, number> {
  const times = new Map<string, number>();
  for (const m of messages) {
    if (m.value === null) continue;
    const { bulkId } = JSON.parse(m.value.toString('utf8')) as { bulkId?: string };
    if (bulkId && !times.has(bulkId)) times.set(bulkId, Number(m.timestamp));
  }
  return times;
}

function ledgerTrail(messages: ReadMessage[], watched: string[]): LedgerTrailEntry[] {
  const watch = new Set(watched);
  const keys = new Set<string>();
  const trail: LedgerTrailEntry[] = [];
  for (const m of messages) {
    const key = m.key?.toString('utf8') ?? null;
    const base = { key, at: Number(m.timestamp), partition: m.partition, offset: m.offset };
    if (m.value === null) {
      if (key !== null && keys.has(key)) trail.push({ ...base, positions: [] });
      continue;
    }
    const entry = JSON.parse(m.value.toString('utf8')) as {
      submissionId?: string;
      bulkId?: string;
      leaseUntil?: number;
      tasks?: { positions: { partition: number; offset: number }[] }[];
    };
    const positions = (entry.tasks ?? [])
      .flatMap((t) => t.positions.map((p) => `${p.partition}:${p.offset}`))
      .filter((p) => watch.has(p));
    if (positions.length === 0) continue;
    if (key !== null) keys.add(key);
    trail.push({
      ...base,
      ...(entry.submissionId ? { submissionId: entry.submissionId } : {}),
      ...(entry.bulkId ? { bulkId: entry.bulkId } : {}),
      ...(entry.leaseUntil ? { leaseUntil: entry.leaseUntil } : {}),
      positions,
    });
  }
  return trail.sort((a, b) => a.at - b.at);
}

function payment(
  input: ReconcileInput,
  ledger: Map<string, number>,
  lookupsNeeded: number,
): Reconciliation['payment'] {
  const bulks = [...input.sandbox.bulks].sort((a, b) => a.createdAt - b.createdAt);
  const firstPaid = new Map<
    string,
    { bulkId: string; createdAt: number; tasks: number; taskIds: Set<string> }
  >();
  const sample: PaidTwiceExample[] = [];
  const byCause: Record<PaidTwiceCause, number> = { retry: 0, ledgerNotConsulted: 0, kill: 0, rebalance: 0 };
  const paidTwice = new Set<string>();
  /** Tasks paid again for a kill, by the bulk that first paid for their content (and its creation). */
  const repaidByFirstBulk = new Map<string, { createdAt: number; tasks: number }>();
  let tasks = 0;
  for (const bulk of bulks) {
    for (const task of bulk.tasks) {
      tasks += 1;
      const first = firstPaid.get(task.contentKey);
      if (!first) {
        firstPaid.set(task.contentKey, {
          bulkId: bulk.id,
          createdAt: bulk.createdAt,
          tasks: bulk.tasks.length,
          taskIds: new Set([task.taskId]),
        });
        continue;
      }
      paidTwice.add(task.contentKey);
      const died = input.disruptions.filter(
        (d) => d.at >= first.createdAt - KILL_WINDOW_MS && d.at <= bulk.createdAt,
      );
      const recordedAt = ledger.get(first.bulkId);
      const cause: PaidTwiceCause = first.taskIds.has(task.taskId)
        ? 'retry'
        : died.length === 0
          ? 'rebalance'
          : recordedAt !== undefined && died.some((d) => d.at > recordedAt)
            ? 'ledgerNotConsulted'
            : 'kill';
      byCause[cause] += 1;
      if (cause === 'kill') {
        const repaid = repaidByFirstBulk.get(first.bulkId) ?? { createdAt: first.createdAt, tasks: 0 };
        repaidByFirstBulk.set(first.bulkId, { ...repaid, tasks: repaid.tasks + 1 });
      }
      first.taskIds.add(task.taskId);
      if (sample.length < 20)
        sample.push({
          contentKey: task.contentKey,
          cause,
          first: {
            bulkId: first.bulkId,
            createdAt: first.createdAt,
            tasks: first.tasks,
            recordedAfterMs: recordedAt === undefined ? null : recordedAt - first.createdAt,
          },
          again: { bulkId: bulk.id, afterMs: bulk.createdAt - first.createdAt, tasks: bulk.tasks.length },
          disruptionsAfterMs: died.map((d) => ({ afterMs: d.at - first.createdAt, what: d.what })),
        });
    }
  }
  const distinct = firstPaid.size;
  const deaths = input.disruptions.filter((d) => d.what.startsWith('replica-')).map((d) => d.at);
  const inWindow = (at: number) => inKillWindow(deaths, at);
  let windowBulks = 0;
  let tasksAgain = 0;
  for (const [bulkId, repaid] of repaidByFirstBulk) {
    if (ledger.has(bulkId) || !inWindow(repaid.createdAt)) continue;
    windowBulks += 1;
    tasksAgain += repaid.tasks;
  }
  const windowConsumes = input.sandbox.consumes.filter((consume) => inWindow(consume.at));
  return {
    bulks: bulks.length,
    tasks,
    lookupsNeeded,
    distinctContentsPaid: distinct,
    tasksBeyondNeeded: tasks - distinct,
    quotaConsumed: input.sandbox.quotaConsumed,
    quotaBeyondNeeded: input.sandbox.quotaConsumed - distinct,
    paidTwice: { contents: paidTwice.size, tasks: tasks - distinct, byCause },
    paidTwiceSample: sample,
    killWindows: {
      bulks: windowBulks,
      tasksAgain,
      consumes: windowConsumes.length,
      units: windowConsumes.reduce((sum, consume) => sum + consume.amount, 0),
    },
  };
}
