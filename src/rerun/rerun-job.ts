// A rerun: a job that looks every stored partner of an input topic (or those a filter
// chooses) up again beside live traffic. The job is written by whoever starts it (the CLI,
// a schedule) to the internal state topic under `rerun/<id>`; each input partition's owner
// executes its share and writes its progress under `rerun/<id>/<partition>` after every
// chunk. Status and progress are derived from those records (rerun-view.ts), so they read
// the same from any machine, and a partition resumes after its last recorded chunk
// wherever it is assigned next.
import type { MatchOutcome } from '../pipeline/outputs.ts';

/** The seed's job vocabulary (spec: event store initializer job). */
export const RERUN_STATUSES = ['CREATED', 'SCHEDULED', 'RUNNING', 'FINISHED', 'DIED', 'CANCELED'] as const;
export type RerunStatus = (typeof RERUN_STATUSES)[number];

/** What the job's owner asked for last; executors follow it. */
export type RerunControl = 'run' | 'pause' | 'cancel';

/** Limits mirrored from the event store initializer job (spec item 20). */
export const RERUN_LIMITS = { batchSize: { min: 1, max: 500 }, maxTags: 10 } as const;

/** Which stored partners a rerun looks up again; every member is optional, all given must hold. */
export interface RerunFilter {
  /** ISO 3166 alpha-2 codes: a partner with an address in one of them. */
  countries?: string[];
  sourceSystems?: string[];
  /** The partner's last outcome. */
  outcomes?: MatchOutcome[];
  /** Only partners whose last lookup is older than this (epoch ms). */
  notLookedUpSince?: number;
}

/** The job as its starter wrote it (key `rerun/<id>`); rewritten with a new control. */
export interface RerunJob {
  id: string;
  /** The input topic whose stored partners are looked up again: the job's scope. */
  inputTopic: string;
  filter: RerunFilter;
  /** Partner ids after this one (in id order, per partition). */
  startAfter?: string;
  /** At most this many partners per input partition. */
  limit?: number;
  /** Partners read per chunk: the unit of progress and of resumption (1..500). */
  batchSize: number;
  /** Labels, at most 10, unique, shown with the job (stored partners carry no tags to filter by). */
  tags: string[];
  /** A BusinessPartnerCreated event per partner regardless of history (a new downstream). */
  initialize: boolean;
  /** Lookups and the change report only: no output is written, the storage is not touched. */
  dryRun: boolean;
  /** The most of each quota window the rerun may take, and only what live records leave (0..1]. */
  quotaShare: number;
  /** Not before this time (epoch ms): SCHEDULED until then. */
  startAt?: number;
  /** The schedule that created it (`run --every`/`--cron`), if any. */
  schedule?: string;
  control: RerunControl;
  createdAt: number;
  /** When `control` was last changed. */
  controlAt: number;
}

export interface RerunCounts {
  /** Stored partners the rerun read and chose. */
  read: number;
  /** Looked up (or resumed from a bulk paid before a restart). */
  lookedUp: number;
  /** Their match changed (see RerunChanges). */
  changed: number;
  unchanged: number;
  /** The lookup failed for good (the stored state stays). */
  failed: number;
  /** A live record for the partner arrived while the rerun's copy waited: the live one won. */
  superseded: number;
}

/** The change report: what changed, per kind, for the partners whose match changed. */
export interface RerunChanges {
  /** No match before (NO_MATCH, MAYBE_MATCH or FAILED), a MATCH now. */
  gainedMatch: number;
  /** A MATCH before, none now. */
  lostMatch: number;
  /** MATCH before and now, another svcId. */
  svcIdChanged: number;
  /** The outcome crossed a threshold otherwise (MAYBE_MATCH <-> NO_MATCH). */
  outcomeChanged: number;
}

/** One input partition's share of a job (key `rerun/<id>/<partition>`), written by its owner. */
export interface RerunPartitionProgress {
  jobId: string;
  partition: number;
  /** Partners of this partition the job chooses, counted when the partition started. */
  total: number;
  /** The last partner id whose outputs are durable: a restart resumes after it. */
  lastPartnerId: string | null;
  /**
   * The partition's greatest partner id when the share started (or where it started, when it
   * held none after that), or the job's `limit`-th chosen partner: the share reads no further.
   * Absent in progress written before it was kept: the share reads to the partition's end.
   */
  endPartnerId?: string;
  done: boolean;
  counts: RerunCounts;
  changes: RerunChanges;
  startedAt: number;
  updatedAt: number;
  finishedAt?: number;
  /** Why this partition's share died; the job is DIED. */
  error?: string;
  /** The consumer group member (or process) that wrote it last. */
  owner?: string;
}

export const emptyCounts = (): RerunCounts => ({
  read: 0,
  lookedUp: 0,
  changed: 0,
  unchanged: 0,
  failed: 0,
  superseded: 0,
});

export const emptyChanges = (): RerunChanges => ({
  gainedMatch: 0,
  lostMatch: 0,
  svcIdChanged: 0,
  outcomeChanged: 0,
});

export const jobKey = (jobId: string): string => `rerun/${jobId}`;
export const progressKey = (jobId: string, partition: number): string => `rerun/${jobId}/${partition}`;
/** Whether a state topic key holds a job or its progress (the topic also holds the bulk ledger). */
export const isRerunKey = (key: string): boolean => key.startsWith('rerun/');

/** Where jobs and their progress are kept (the internal state topic). */
export interface RerunJobStore {
  /** Reads everything up to the topic's end as it is now. */
  load(): Promise<void>;
  /**
   * Keeps reading what anyone writes, until the returned function is called; `changed` is
   * called after each job or progress record that was read, `failed` once reading stopped for good.
   */
  follow(changed: (jobId: string) => void, failed: (error: Error) => void): Promise<() => Promise<void>>;
  /** Every job known, in no particular order (job-order.ts orders them). */
  jobs(): RerunJob[];
  job(jobId: string): RerunJob | undefined;
  /** Progress records of the job, per partition. */
  progress(jobId: string): Map<number, RerunPartitionProgress>;
  saveJob(job: RerunJob): Promise<void>;
  /**
   * Writes a new job unless `admit` throws, decided and written as one step against every
   * other creation of a job of the same input topic (`rerun start`, `run`'s schedule):
   * `admit` decides on the store as read within that step. 'found': an attempt raced by
   * another creation found the job there as this one would have written it (its own commit
   * after all, or the same record from another: a schedule's replicas write one per slot).
   */
  createJob(job: RerunJob, admit: () => Promise<void>): Promise<'written' | 'found'>;
  saveProgress(progress: RerunPartitionProgress): Promise<void>;
  close(): Promise<void>;
}

/** A job is over once canceled, once any partition's share died, or once every partition is done. */
export function isEnded(
  job: RerunJob,
  progress: ReadonlyMap<number, RerunPartitionProgress>,
  partitionCount: number,
): boolean {
  if (job.control === 'cancel') return true;
  if ([...progress.values()].some((share) => share.error !== undefined)) return true;
  return Array.from(
    { length: partitionCount },
    (_, partition) => progress.get(partition)?.done === true,
  ).every(Boolean);
}
