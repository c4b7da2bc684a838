// What `rerun status` and `rerun list` show, derived from the records alone (the job, its
// progress per partition, the input topic's partition count and the other jobs), so that it
// reads the same on every machine and at every moment the records are the same.
import { jobOrder } from './job-order.ts';
import {
  emptyChanges,
  emptyCounts,
  type RerunChanges,
  type RerunCounts,
  type RerunJob,
  type RerunPartitionProgress,
  type RerunStatus,
} from './rerun-job.ts';

type ProgressMap = ReadonlyMap<number, RerunPartitionProgress>;

export interface RerunViewInput {
  job: RerunJob;
  progress: ProgressMap;
  /** Partitions of the job's input topic; undefined when the topic does not exist. */
  partitions: number | undefined;
  /** Every job known: an earlier job of the same input topic that has not ended runs first. */
  jobs: readonly RerunJob[];
  progressOf(jobId: string): ProgressMap;
  now: number;
}

export interface RerunView {
  job: RerunJob;
  status: RerunStatus;
  /** FINISHED, DIED or CANCELED: nothing more happens to the job. */
  ended: boolean;
  /** Its owner asked for a pause and the job has not ended. */
  paused: boolean;
  /** 0..100, whole; 100 only once FINISHED. */
  progress: number;
  /** Partitions of the input topic, those that started and those done. */
  partitions: { count: number | undefined; started: number; done: number };
  /** Partners the job chooses: counted for the started partitions, estimated for the others. */
  total: number | undefined;
  counts: RerunCounts;
  changes: RerunChanges;
  startedAt?: number;
  finishedAt?: number;
  message?: string;
  /** Partners read per second between the first start and the last progress record. */
  rate?: number;
  /** Time still needed at `rate` (ms), while running. */
  etaMs?: number;
  /** The earlier job of the same input topic this one waits for. */
  waitingFor?: string;
}

const ENDED: readonly RerunStatus[] = ['FINISHED', 'DIED', 'CANCELED'];

export const isEndedStatus = (status: RerunStatus): boolean => ENDED.includes(status);

/** The progress records of the input topic's partitions (a record beyond them is not the topic's). */
function ofTopic(progress: ProgressMap, partitions: number | undefined): RerunPartitionProgress[] {
  return [...progress.values()].filter((p) => partitions === undefined || p.partition < partitions);
}

/** The job's status alone, without what the other jobs mean for it. */
export function rerunStatus(
  job: RerunJob,
  progress: ProgressMap,
  partitions: number | undefined,
  now: number,
): RerunStatus {
  const records = ofTopic(progress, partitions);
  if (records.some((p) => p.error !== undefined)) return 'DIED';
  const done = new Set(records.filter((p) => p.done).map((p) => p.partition));
  if (partitions !== undefined && partitions > 0 && done.size === partitions) return 'FINISHED';
  if (job.control === 'cancel') return 'CANCELED';
  if (records.length > 0) return 'RUNNING';
  return job.startAt !== undefined && job.startAt > now ? 'SCHEDULED' : 'CREATED';
}

function sum<K extends string>(items: Record<K, number>[], empty: Record<K, number>): Record<K, number> {
  const total = { ...empty };
  for (const item of items) for (const key of Object.keys(total) as K[]) total[key] += item[key];
  return total;
}

const min = (values: number[]): number | undefined => (values.length === 0 ? undefined : Math.min(...values));
const max = (values: number[]): number | undefined => (values.length === 0 ? undefined : Math.max(...values));
const iso = (ms: number): string => new Date(ms).toISOString();

/** The first job of the same input topic, earlier in the order, that has not ended. */
function blockingJob(input: RerunViewInput): RerunJob | undefined {
  const { job, jobs, partitions, now } = input;
  const order = jobOrder(input.progressOf);
  return [...jobs]
    .sort(order)
    .find(
      (other) =>
        other.id !== job.id &&
        other.inputTopic === job.inputTopic &&
        order(other, job) < 0 &&
        !isEndedStatus(rerunStatus(other, input.progressOf(other.id), partitions, now)),
    );
}

export function rerunView(input: RerunViewInput): RerunView {
  const { job, partitions, now } = input;
  const records = ofTopic(input.progress, partitions);
  const status = rerunStatus(job, input.progress, partitions, now);
  const ended = isEndedStatus(status);
  const counts = sum<keyof RerunCounts>(
    records.map((p) => p.counts),
    emptyCounts(),
  );
  const changes = sum<keyof RerunChanges>(
    records.map((p) => p.changes),
    emptyChanges(),
  );
  const started = records.length;
  const done = records.filter((p) => p.done).length;
  const countedTotal = records.reduce((n, p) => n + p.total, 0);
  // A partition not started yet counts as the started ones' average: progress cannot reach
  // 100 before every partition started, and does not jump back when one starts.
  const total = partitions === undefined || started === 0 ? undefined : (countedTotal * partitions) / started;
  const startedAt = min(records.map((p) => p.startedAt));
  const lastUpdate = max(records.map((p) => p.finishedAt ?? p.updatedAt));
  const finishedAt = !ended
    ? undefined
    : status === 'CANCELED'
      ? Math.max(job.controlAt, lastUpdate ?? job.controlAt)
      : lastUpdate;

  const elapsedMs = startedAt === undefined || lastUpdate === undefined ? 0 : lastUpdate - startedAt;
  const rate = elapsedMs > 0 && counts.read > 0 ? (counts.read * 1000) / elapsedMs : undefined;
  const running = status === 'RUNNING' && job.control === 'run';
  const etaMs =
    running && rate !== undefined && total !== undefined
      ? (Math.max(0, total - counts.read) * 1000) / rate
      : undefined;

  const waiting = status === 'CREATED' || status === 'SCHEDULED' ? blockingJob(input) : undefined;
  const paused = job.control === 'pause' && !ended;
  const message = describe(status, input, records, { paused, waiting });

  return {
    job,
    status,
    ended,
    paused,
    progress: progressPercent(status, counts.read, total, partitions, done),
    partitions: { count: partitions, started, done },
    total: total === undefined ? undefined : Math.round(total),
    counts,
    changes,
    ...(startedAt === undefined ? {} : { startedAt }),
    ...(finishedAt === undefined ? {} : { finishedAt }),
    ...(message === undefined ? {} : { message }),
    ...(rate === undefined ? {} : { rate }),
    ...(etaMs === undefined ? {} : { etaMs }),
    ...(waiting === undefined ? {} : { waitingFor: waiting.id }),
  };
}

function progressPercent(
  status: RerunStatus,
  read: number,
  total: number | undefined,
  partitions: number | undefined,
  done: number,
): number {
  if (status === 'FINISHED') return 100;
  // Partitions holding nothing the job chooses: only their being done says how far it got.
  const fraction = total !== undefined && total > 0 ? read / total : partitions ? done / partitions : 0;
  return Math.min(99, Math.floor(fraction * 100));
}

function describe(
  status: RerunStatus,
  { job, partitions }: RerunViewInput,
  records: RerunPartitionProgress[],
  { paused, waiting }: { paused: boolean; waiting: RerunJob | undefined },
): string | undefined {
  if (status === 'DIED') {
    return records
      .filter((p) => p.error !== undefined)
      .sort((a, b) => a.partition - b.partition)
      .map((p) => `partition ${p.partition}: ${p.error}`)
      .join('; ');
  }
  if (partitions === undefined) return `input topic ${job.inputTopic} does not exist`;
  if (status === 'CANCELED') return `canceled at ${iso(job.controlAt)}`;
  if (status === 'FINISHED') return undefined;
  const parts = [
    ...(status === 'SCHEDULED' && job.startAt !== undefined ? [`starts at ${iso(job.startAt)}`] : []),
    ...(waiting === undefined ? [] : [`waiting for rerun ${waiting.id}`]),
    ...(paused ? [`paused since ${iso(job.controlAt)}`] : []),
  ];
  return parts.length === 0 ? undefined : parts.join('; ');
}
