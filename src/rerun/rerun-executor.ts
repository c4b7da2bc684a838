// Runs reruns inside `run`: follows the jobs in the state topic and, for the one job of its
// input topic that is due (the first not ended in run order, job-order.ts: jobs of one scope
// never overlap, a started job keeps the scope until it ends), runs its share on each input
// partition this replica owns.
// A rebalance moves a partition's share with the partition; a pause holds it between
// chunks, a cancel stops it after the chunk under way.
import type { PartitionRef } from '../pipeline/ports.ts';
import { inRunOrder } from './job-order.ts';
import { PartitionRerun, type RerunHost, type StoredPartners } from './partition-rerun.ts';
import { isEnded, type RerunJob, type RerunJobStore } from './rerun-job.ts';
import { MAX_TIMER_MS } from '../timer-limit.ts';

export interface RerunExecutorParts {
  host: RerunHost;
  jobs: RerunJobStore;
  state: StoredPartners;
  inputTopic: string;
  /** Partitions of the input topic: a job is done when all of them are. */
  partitionCount: () => number;
  owner?: () => string | undefined;
  now?: () => number;
  /** Resolves once live work leaves room for a rerun's next chunk. */
  headroom?: () => Promise<void>;
  /**
   * A partition's share failed (its progress could not be written), or following the jobs stopped
   * for good: the process cannot go on with it.
   */
  failed: (error: Error) => void;
  /** A share starts (its partners are counted first): the rerun's quota can learn the window meanwhile. */
  starting?: () => void;
}

export class RerunExecutor {
  readonly #parts: RerunExecutorParts;
  readonly #running = new Map<string, { jobId: string; runner: PartitionRerun; done: Promise<void> }>();
  /**
   * Shares that stopped unfinished of themselves under an assignment (their work was dropped: the
   * partition is going, the pipeline stops): not started again under it. A share this executor
   * aborted is not one of them: when another job became due (both started, on replicas that read
   * the state topic in different orders), it resumes once its job is due again.
   */
  readonly #interrupted = new Set<string>();
  #changed = Promise.withResolvers<undefined>();
  #unfollow: (() => Promise<void>) | undefined;
  #unlisten: (() => void) | undefined;
  #startTimer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(parts: RerunExecutorParts) {
    this.#parts = parts;
  }

  /**
   * This replica's part of the job's share of each quota window: the share times the part of
   * the partitions not done that it runs. Each replica counts what it takes against its part;
   * counted against the whole share, N replicas took N shares of every window (4 replicas at
   * 0.2: 80 %), and live traffic coming back was refused. Partitions done give their part to
   * those left; one whose runner is not started yet keeps its part unused meanwhile.
   */
  #quotaShareOf(jobId: string): number {
    const { jobs } = this.#parts;
    const share = (jobs.job(jobId) as RerunJob).quotaShare;
    const progress = jobs.progress(jobId);
    const count = this.#parts.partitionCount();
    let left = 0;
    for (let partition = 0; partition < count; partition += 1) if (!progress.get(partition)?.done) left += 1;
    let mine = 0;
    for (const [partition, running] of this.#running)
      if (running.jobId === jobId && !progress.get(Number(partition))?.done) mine += 1;
    return left === 0 || mine === 0 ? share : share * Math.min(1, mine / left);
  }

  async start(): Promise<void> {
    await this.#parts.jobs.load();
    this.#unfollow = await this.#parts.jobs.follow(
      () => this.#reconcile(),
      (error) => this.#parts.failed(error),
    );
    this.#unlisten = this.#parts.host.onPartitions(() => this.#reconcile());
    this.#reconcile();
  }

  /** Stops every partition's share after what is under way; their progress stays as last written. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#startTimer);
    this.#unlisten?.();
    for (const { runner } of this.#running.values()) runner.abort();
    await Promise.allSettled([...this.#running.values()].map((r) => r.done));
    await this.#unfollow?.();
  }

  /** The job of this replica's input topic that runs now, if any. */
  due(): RerunJob | undefined {
    const { jobs, inputTopic, partitionCount } = this.#parts;
    return inRunOrder(jobs).find(
      (job) => job.inputTopic === inputTopic && !isEnded(job, jobs.progress(job.id), partitionCount()),
    );
  }

  #reconcile(): void {
    const changed = this.#changed;
    this.#changed = Promise.withResolvers<undefined>();
    changed.resolve(undefined);
    if (this.#stopped) return;
    const job = this.due();
    const owned = new Map(this.#parts.host.partitions().map((p) => [p.ref.partition, p]));
    for (const [key, running] of this.#running) {
      const partition = owned.get(Number(key));
      if (partition?.epoch !== running.runner.epoch) running.runner.abort();
      // A canceled job is ended, so never due; its share stops by itself after the chunk under
      // way, whose outputs are written and then recorded (docs/RERUNS.md). Aborted here, that
      // chunk's outputs were written and its progress was not: the job's counts left it out.
      // The partition's next job starts once the share has stopped (#launch skips it until then).
      else if (running.jobId !== job?.id && this.#parts.jobs.job(running.jobId)?.control !== 'cancel')
        running.runner.abort();
    }
    if (!job || job.control === 'cancel') return;
    const now = (this.#parts.now ?? Date.now)();
    if (job.startAt !== undefined && job.startAt > now) {
      clearTimeout(this.#startTimer);
      this.#startTimer = setTimeout(() => this.#reconcile(), Math.min(job.startAt - now, MAX_TIMER_MS));
      this.#startTimer.unref();
      return;
    }
    for (const { ref, epoch, restored } of owned.values()) {
      if (this.#running.has(String(ref.partition))) continue;
      if (this.#interrupted.has(`${job.id}:${ref.partition}:${epoch}`)) continue;
      const progress = this.#parts.jobs.progress(job.id).get(ref.partition);
      if (progress?.done || progress?.error !== undefined) continue;
      this.#launch(job.id, ref, epoch, restored);
    }
  }

  #launch(jobId: string, ref: PartitionRef, epoch: number, restored: Promise<void>): void {
    const { jobs } = this.#parts;
    this.#parts.starting?.();
    const runner = new PartitionRerun(
      {
        host: this.#parts.host,
        jobs,
        state: this.#parts.state,
        job: () => jobs.job(jobId) as RerunJob,
        quotaShare: () => this.#quotaShareOf(jobId),
        changed: () => this.#changed.promise,
        ...(this.#parts.owner ? { owner: this.#parts.owner } : {}),
        ...(this.#parts.now ? { now: this.#parts.now } : {}),
        ...(this.#parts.headroom ? { headroom: this.#parts.headroom } : {}),
      },
      ref,
      epoch,
    );
    const key = String(ref.partition);
    const done = restored
      .then(() => runner.run())
      .then((finished) => {
        if (!finished && !runner.aborted) this.#interrupted.add(`${jobId}:${ref.partition}:${epoch}`);
      })
      .catch((error: unknown) => {
        if (!this.#stopped) this.#parts.failed(error as Error);
      })
      .finally(() => {
        if (this.#running.get(key)?.runner === runner) this.#running.delete(key);
        // Its partition may have a share of the next job, or of this one again after a move.
        if (!this.#stopped) queueMicrotask(() => this.#reconcile());
      });
    this.#running.set(key, { jobId, runner, done });
  }
}
