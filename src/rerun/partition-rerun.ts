// One input partition's share of a rerun, executed by the partition's owner: its stored
// partners in id order, a chunk at a time (Debezium's incremental snapshot, DBLog): a chunk
// is offered to the pipeline, its outcomes are awaited (outputs durable), then the partition's
// progress (the last partner id, counts, the change report) is written to the state topic.
// A kill or a rebalance loses at most the chunk under way, which the next owner offers again
// under the same ledger positions: the bulks it paid for are read again, not paid again, and
// the partners whose outputs it wrote are counted by their stored mark, not looked up again.
import { setImmediate } from 'node:timers/promises';
import { pipelineEvents } from '../observability/events.ts';
import { rerunOutcome, type StoredPartner } from '../pipeline/outputs.ts';
import type { PartitionRef } from '../pipeline/ports.ts';
import type { RerunOutcome, RerunTask } from '../pipeline/records.ts';
import { chooses } from './rerun-filter.ts';
import {
  emptyChanges,
  emptyCounts,
  type RerunFilter,
  type RerunJob,
  type RerunJobStore,
  type RerunPartitionProgress,
} from './rerun-job.ts';

/** What the pipeline offers a rerun (Pipeline implements it). */
export interface RerunHost {
  partitions(): { ref: PartitionRef; epoch: number; restored: Promise<void> }[];
  onPartitions(listener: () => void): () => void;
  rerun(
    ref: PartitionRef,
    epoch: number,
    partners: { partnerId: string; stored: StoredPartner }[],
    task: Omit<RerunTask, 'partition' | 'previous' | 'settle'>,
  ): Promise<RerunOutcome>[];
  releaseRerun(jobId: string, partition: number): Promise<void>;
}

/** The partner state, read in partner id order. */
export interface StoredPartners {
  scan(
    ref: PartitionRef,
    after: string,
    limit: number,
    until?: string,
  ): { partnerId: string; stored: StoredPartner }[];
}

export interface PartitionRerunParts {
  host: RerunHost;
  jobs: RerunJobStore;
  state: StoredPartners;
  /** The job as it stands now (its control and quota share can change while it runs). */
  job: () => RerunJob;
  /** This replica's part of the job's quota share, read at every request (the executor's split). */
  quotaShare: () => number;
  /** Resolves at the next change of any job (a pause lifted, a cancel). */
  changed: () => Promise<unknown>;
  /** Resolves once live work leaves room for the next chunk (see live-headroom.ts). */
  headroom?: () => Promise<void>;
  owner?: () => string | undefined;
  now?: () => number;
}

/**
 * The next partners a share looks up, the outcomes of those this job looked up already (their
 * outputs written before a kill or a move took the chunk's progress), and the last partner id
 * read to choose them.
 */
interface Chunk {
  partners: { partnerId: string; stored: StoredPartner }[];
  counted: RerunOutcome[];
  last: string | null;
}

/** Rows read per scan: while counting, and at most while a filter leaves most of them out. */
const SCAN_PAGE = 1_000;

export class PartitionRerun {
  readonly #parts: PartitionRerunParts;
  readonly #ref: PartitionRef;
  readonly #epoch: number;
  readonly #abort = new AbortController();
  readonly #aborted: Promise<'aborted'>;

  constructor(parts: PartitionRerunParts, ref: PartitionRef, epoch: number) {
    this.#parts = parts;
    this.#ref = ref;
    this.#epoch = epoch;
    this.#aborted = new Promise((resolve) =>
      this.#abort.signal.addEventListener('abort', () => resolve('aborted'), { once: true }),
    );
  }

  get epoch(): number {
    return this.#epoch;
  }

  /** Stops after what is under way; nothing more is written for this partition by this runner. */
  abort(): void {
    this.#abort.abort();
  }

  get aborted(): boolean {
    return this.#abort.signal.aborted;
  }

  /**
   * Runs the partition's share to its end (true), or until aborted, canceled or its work was
   * dropped (false). Rejects when its progress cannot be written.
   */
  async run(): Promise<boolean> {
    const jobId = this.#parts.job().id;
    try {
      return await this.#run(jobId);
    } finally {
      // However the share ends here (done, moved to another member, stopped, canceled, died),
      // its progress series goes: a share that moved kept its last ratio on its former owner
      // for as long as that process ran, beside the new owner's series of the same partition.
      pipelineEvents.rerun.publish({ type: 'left', jobId, partition: this.#ref.partition });
    }
  }

  async #run(jobId: string): Promise<boolean> {
    const { jobs, host } = this.#parts;
    const now = this.#parts.now ?? Date.now;
    let progress = jobs.progress(jobId).get(this.#ref.partition) ?? (await this.#start(now()));
    if (progress.done || progress.error !== undefined) return true;
    if (!jobs.progress(jobId).has(this.#ref.partition)) await this.#save(progress);
    while (!this.#abort.signal.aborted) {
      const job = this.#parts.job();
      if (job.control === 'cancel') return false;
      if (job.control === 'pause') {
        if ((await Promise.race([this.#parts.changed(), this.#aborted])) === 'aborted') return false;
        continue;
      }
      if ((await Promise.race([this.#parts.headroom?.(), this.#aborted])) === 'aborted') return false;
      // A pause or cancel asked for while the loop was busy: no chunk is begun after it.
      if (this.#parts.job().control !== 'run') continue;
      let chunk: Chunk | 'aborted';
      try {
        chunk = await this.#chunk(job, progress);
      } catch (error) {
        // The partition's state cannot be read (a damaged file): the share dies, the job
        // says so (DIED, with the reason), live work goes on.
        progress = { ...progress, error: (error as Error).message, updatedAt: now(), finishedAt: now() };
        await this.#save(progress);
        return true;
      }
      // Revoked while the chunk was read: what the store answered after its release is no end.
      if (chunk === 'aborted') return false;
      if (chunk.partners.length === 0 && chunk.counted.length === 0) {
        progress = {
          ...progress,
          lastPartnerId: chunk.last,
          done: true,
          updatedAt: now(),
          finishedAt: now(),
        };
        await this.#save(progress);
        this.#published(progress, []);
        return true;
      }
      const looked =
        chunk.partners.length === 0
          ? []
          : await Promise.race([
              Promise.all(
                host.rerun(this.#ref, this.#epoch, chunk.partners, {
                  jobId,
                  initialize: job.initialize,
                  dryRun: job.dryRun,
                  quotaShare: this.#parts.quotaShare,
                }),
              ),
              this.#aborted,
            ]);
      // The partition moved or the pipeline stops: whoever owns it next redoes this chunk.
      if (looked === 'aborted' || looked.some((o) => o.kind === 'dropped')) return false;
      const outcomes = [...chunk.counted, ...looked];
      progress = tally(progress, outcomes, chunk.last, now());
      await this.#save(progress);
      this.#published(progress, outcomes);
      await host.releaseRerun(jobId, this.#ref.partition);
    }
    return false;
  }

  /** Metrics and anyone else listening: what the chunk's partners came to, how far the share is. */
  #published(progress: RerunPartitionProgress, outcomes: RerunOutcome[]): void {
    const results = { changed: 0, unchanged: 0, failed: 0, superseded: 0 };
    for (const { kind } of outcomes) if (kind !== 'dropped') results[kind] += 1;
    pipelineEvents.rerun.publish({
      type: 'chunk',
      jobId: progress.jobId,
      partition: progress.partition,
      results,
      read: progress.counts.read,
      total: progress.total,
      done: progress.done,
    });
  }

  async #start(at: number): Promise<RerunPartitionProgress> {
    const job = this.#parts.job();
    const { total, endPartnerId } = await this.#count(job, at);
    return {
      jobId: job.id,
      partition: this.#ref.partition,
      total,
      lastPartnerId: null,
      endPartnerId,
      done: false,
      counts: emptyCounts(),
      changes: emptyChanges(),
      startedAt: at,
      updatedAt: at,
      ...this.#owner(),
    };
  }

  async #save(progress: RerunPartitionProgress): Promise<void> {
    if (this.#abort.signal.aborted) return;
    await this.#parts.jobs.saveProgress({ ...progress, ...this.#owner() });
  }

  #owner(): { owner?: string } {
    const owner = this.#parts.owner?.();
    return owner ? { owner } : {};
  }

  /**
   * How many partners the job chooses in this partition (what its progress counts towards),
   * and where the share ends: the last partner id there is now, or the job's `limit`-th chosen
   * partner. The limit is a key range, not only a count: a share resumed after a kill no
   * longer chooses the partners whose outputs its lost chunk wrote (looked up since it
   * started), left them out of its count, and read as many again past the limit (measured:
   * `--limit 300`, SIGKILL mid-chunk: 350 partners of one partition looked up).
   */
  async #count(job: RerunJob, startedAt: number): Promise<{ total: number; endPartnerId: string }> {
    const filter = fromBefore(job, startedAt);
    let count = 0;
    let last = job.startAfter ?? '';
    for (;;) {
      // A partition of millions of partners takes seconds to count: live work goes on between pages.
      await setImmediate();
      const rows = this.#parts.state.scan(this.#ref, last, SCAN_PAGE);
      for (const row of rows) {
        last = row.partnerId;
        if (!chooses(filter, row.stored)) continue;
        count += 1;
        if (count === job.limit) return { total: count, endPartnerId: last };
      }
      if (rows.length < SCAN_PAGE) break;
    }
    return { total: count, endPartnerId: last };
  }

  /**
   * The next chosen partners after the last chunk, and the last id read to find them; 'aborted'
   * when the share was stopped while it read.
   */
  async #chunk(job: RerunJob, progress: RerunPartitionProgress): Promise<Chunk | 'aborted'> {
    const filter = fromBefore(job, progress.startedAt);
    const wanted = Math.min(
      job.batchSize,
      job.limit === undefined ? Number.POSITIVE_INFINITY : job.limit - progress.counts.read,
    );
    const partners: { partnerId: string; stored: StoredPartner }[] = [];
    const counted: RerunOutcome[] = [];
    let last = progress.lastPartnerId;
    if (wanted <= 0) return { partners, counted, last };
    // Each row read is a stored partner parsed: a chunk reads what it still needs, twice as
    // much again each time the filter leaves rows out, not a full page for a bulk of 50.
    for (let limit = Math.min(wanted, SCAN_PAGE); ; limit = Math.min(limit * 2, SCAN_PAGE)) {
      // Where the filter leaves out long runs of partners (another country, partners new since
      // the start), one chunk reads tens of thousands of rows: read at once, they held the
      // event loop 150-350 ms, live records and the quota's timers waiting (benchmark rerun).
      await setImmediate();
      if (this.#abort.signal.aborted) return 'aborted';
      const rows = this.#parts.state.scan(
        this.#ref,
        last ?? job.startAfter ?? '',
        limit,
        progress.endPartnerId,
      );
      for (const row of rows) {
        last = row.partnerId;
        // Past the last recorded chunk, only a chunk lost to a kill or a move can have marked
        // it: its outputs stand, and it was looked up since the start, so the filter would
        // leave it out, uncounted (the counts fell short of the job's MatchResults).
        const outcome = rerunOutcome(job.id, row.stored);
        if (outcome !== undefined) counted.push(outcome);
        else if (chooses(filter, row.stored)) partners.push(row);
        else continue;
        if (partners.length + counted.length === wanted) return { partners, counted, last };
      }
      if (rows.length < limit) return { partners, counted, last };
    }
  }
}

/**
 * The job's filter, and only partners last looked up before the share started: one looked up
 * since (by a live record, or by this rerun before a restart) has its fresh match already. The
 * key range is fixed at the start too (`endPartnerId`, as in Debezium's and DBLog's chunked
 * snapshots): partners new since then were read past, filtered out, at every share's end; only
 * those whose ids sort inside the range are left to this filter.
 */
function fromBefore(job: RerunJob, startedAt: number): RerunFilter {
  const since = job.filter.notLookedUpSince;
  return { ...job.filter, notLookedUpSince: since === undefined ? startedAt : Math.min(since, startedAt) };
}

function tally(
  progress: RerunPartitionProgress,
  outcomes: RerunOutcome[],
  last: string | null,
  at: number,
): RerunPartitionProgress {
  const counts = { ...progress.counts };
  const changes = { ...progress.changes };
  counts.read += outcomes.length;
  for (const outcome of outcomes) {
    if (outcome.kind === 'changed') {
      counts.lookedUp += 1;
      counts.changed += 1;
      changes[outcome.change] += 1;
    } else if (outcome.kind === 'unchanged') {
      counts.lookedUp += 1;
      counts.unchanged += 1;
    } else if (outcome.kind === 'failed') counts.failed += 1;
    else if (outcome.kind === 'superseded') counts.superseded += 1;
  }
  return { ...progress, counts, changes, lastPartnerId: last, updatedAt: at };
}
