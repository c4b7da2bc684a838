// The executor against the real partner state (SQLite in a temporary directory); the job store
// and the pipeline it offers chunks to are in-memory stand-ins: the store keeps the latest
// record per key and tells the executor of each write, as the Kafka store's follower does; the
// pipeline settles each chunk a few milliseconds later.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { PartitionRef } from '../../src/pipeline/ports.ts';
import type { RerunHost } from '../../src/rerun/partition-rerun.ts';
import { RerunExecutor } from '../../src/rerun/rerun-executor.ts';
import type { RerunJob, RerunJobStore, RerunPartitionProgress } from '../../src/rerun/rerun-job.ts';
import { PartnerState } from '../../src/state/partner-state.ts';
import { simulatedProgress, testJob } from '../support/rerun-records.ts';
import { storedPartner } from '../support/stored-partners.ts';

const ref: PartitionRef = { topic: 'partners', partition: 0 };
const PARTNERS = 200;
const BATCH = 10;
const SLOT = Date.parse('2025-03-11T02:00:00Z');

class InMemoryRerunJobStoreStandIn implements RerunJobStore {
  readonly #jobs = new Map<string, RerunJob>();
  readonly #progress = new Map<string, Map<number, RerunPartitionProgress>>();
  #changed: (jobId: string) => void = () => {};

  load = async (): Promise<void> => {};

  follow = async (changed: (jobId: string) => void): Promise<() => Promise<void>> => {
    this.#changed = changed;
    return async () => {};
  };

  /** A store owes no order: these come by creation time, the order that lets a job preempt one running. */
  jobs(): RerunJob[] {
    return [...this.#jobs.values()].sort((a, b) => a.createdAt - b.createdAt);
  }

  job(jobId: string): RerunJob | undefined {
    return this.#jobs.get(jobId);
  }

  progress(jobId: string): Map<number, RerunPartitionProgress> {
    return new Map(this.#progress.get(jobId));
  }

  async saveJob(job: RerunJob): Promise<void> {
    this.#jobs.set(job.id, job);
    queueMicrotask(() => this.#changed(job.id));
  }

  async createJob(job: RerunJob, admit: () => Promise<void>): Promise<'written'> {
    await admit();
    await this.saveJob(job);
    return 'written';
  }

  async saveProgress(progress: RerunPartitionProgress): Promise<void> {
    const shares = this.#progress.get(progress.jobId) ?? new Map<number, RerunPartitionProgress>();
    shares.set(progress.partition, progress);
    this.#progress.set(progress.jobId, shares);
    queueMicrotask(() => this.#changed(progress.jobId));
  }

  close = async (): Promise<void> => {};
}

const states: PartnerState[] = [];
const executors: RerunExecutor[] = [];
afterEach(async () => {
  await Promise.all(executors.splice(0).map((executor) => executor.stop()));
  for (const state of states.splice(0)) state.close();
});

/**
 * An executor owning partition 0 of an input topic of `partitionCount` partitions, which holds
 * 200 stored partners; `offered` lists the job of every chunk the pipeline was offered, in order.
 */
async function replica(
  partitionCount: number,
  options: { now?: () => number; settled?: () => Promise<void> } = {},
) {
  const { now, settled = () => new Promise<void>((resolve) => setTimeout(resolve, 3)) } = options;
  const state = new PartnerState({ dir: mkdtempSync(join(tmpdir(), 'rerun-executor-')) });
  states.push(state);
  await state.restore([ref]);
  for (let i = 0; i < PARTNERS; i += 1) {
    const partnerId = `P-${String(i).padStart(5, '0')}`;
    state.set(ref, partnerId, storedPartner(partnerId));
  }
  const store = new InMemoryRerunJobStoreStandIn();
  const offered: string[] = [];
  /** The quota share each chunk's lookups were to take at most, as read when offered. */
  const shares: number[] = [];
  const host: RerunHost = {
    partitions: () => [{ ref, epoch: 1, restored: Promise.resolve() }],
    onPartitions: () => () => {},
    rerun: (_ref, _epoch, partners, task) => {
      offered.push(task.jobId);
      shares.push(task.quotaShare());
      const outcomes = settled();
      return partners.map(() => outcomes.then(() => ({ kind: 'unchanged', outcome: 'NO_MATCH' }) as const));
    },
    releaseRerun: async () => {},
  };
  const executor = new RerunExecutor({
    host,
    jobs: store,
    state,
    inputTopic: ref.topic,
    partitionCount: () => partitionCount,
    ...(now ? { now } : {}),
    failed: (error) => {
      throw error;
    },
  });
  executors.push(executor);
  await executor.start();
  const share = (jobId: string) => store.progress(jobId).get(ref.partition);
  const read = (jobId: string) => share(jobId)?.counts.read ?? 0;
  return { store, executor, offered, shares, share, read };
}

/** The jobs of `offered` with repeats folded: the order the jobs held the partition in. */
const turns = (offered: string[]) => offered.filter((jobId, i) => jobId !== offered[i - 1]);

const job = (id: string, createdAt: number): RerunJob =>
  testJob(id, ref.topic, { batchSize: BATCH, quotaShare: 1, createdAt, controlAt: createdAt });

describe('RerunExecutor', () => {
  it('regression: a job written while another ran, with an earlier creation time (a scheduled slot), preempted it, which then never resumed', async () => {
    const { store, executor, offered, share, read } = await replica(1);
    // `rerun start` at 02:00:05; its share runs.
    await store.saveJob(job('rerun-cli-a', SLOT + 5_000));
    await vi.waitFor(() => expect(read('rerun-cli-a')).toBeGreaterThanOrEqual(3 * BATCH));
    // The schedule's job for the 02:00:00 slot, decided before the other was visible.
    await store.saveJob(job('scheduled-20250311T020000Z', SLOT));
    expect(executor.due()?.id).toBe('rerun-cli-a');

    await vi.waitFor(() => expect(share('scheduled-20250311T020000Z')?.done).toBe(true), { timeout: 3_000 });
    expect(share('rerun-cli-a')).toMatchObject({ done: true, counts: { read: PARTNERS } });
    expect(read('scheduled-20250311T020000Z')).toBe(PARTNERS);
    // One after the other: the running job to its end, then the one written later.
    expect(turns(offered)).toEqual(['rerun-cli-a', 'scheduled-20250311T020000Z']);
    expect(executor.due()).toBeUndefined();
  });

  it('regression: a share stopped because another job became due was never started again on this replica', async () => {
    // Two partitions, this replica owns 0. Another replica, which read the state topic in
    // another order, started the earlier-created job on partition 1 while this one ran the
    // later-created job on 0: both have started, the earlier creation time goes first.
    const { store, executor, offered, share, read } = await replica(2);
    await store.saveJob(job('later', SLOT + 5_000));
    await vi.waitFor(() => expect(read('later')).toBeGreaterThanOrEqual(3 * BATCH));
    await store.saveJob(job('earlier', SLOT));
    await store.saveProgress(simulatedProgress('earlier', 1, { done: true }));

    await vi.waitFor(() => expect(share('earlier')?.done).toBe(true), { timeout: 3_000 });
    await vi.waitFor(() => expect(share('later')?.done).toBe(true), { timeout: 3_000 });
    expect(share('later')?.counts.read).toBe(PARTNERS);
    expect(turns(offered)).toEqual(['later', 'earlier', 'later']);
    // Partition 1's share is the other replica's.
    expect(executor.due()?.id).toBe('later');
  });

  it('regression: a job whose --start-at was more than 24.8 days ahead made the executor reconcile every millisecond until then', async () => {
    // setTimeout takes at most 2^31-1 ms and fires after 1 ms when asked for more: the
    // executor re-armed its start timer, found the job still ahead, and armed it again.
    let looks = 0;
    const { store, executor, offered } = await replica(1, {
      now: () => {
        looks += 1;
        return Date.now();
      },
    });
    await store.saveJob({ ...job('next-month', Date.now()), startAt: Date.now() + 30 * 86_400_000 });
    await vi.waitFor(() => expect(looks).toBeGreaterThan(0));
    const before = looks;
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Nothing happens to the job or the store meanwhile: nothing to look at again.
    expect(looks - before).toBeLessThanOrEqual(1);
    expect(offered).toEqual([]);
    expect(executor.due()?.id).toBe('next-month');
  });

  it("regression: each replica took the job's whole quota share for its own partitions, so N replicas took N shares of every window; a replica takes the share times the part of the partitions not done that it runs", async () => {
    // This replica runs partition 0 of 4; the other three are another replica's, or done.
    const { store, shares } = await replica(4, {
      settled: () => new Promise<void>((resolve) => setTimeout(resolve, 20)),
    });
    await store.saveJob({ ...job('split', Date.now()), quotaShare: 0.8 });
    await vi.waitFor(() => expect(shares.length).toBeGreaterThan(0));
    expect(shares[0]).toBeCloseTo(0.2);
    for (const partition of [1, 2, 3])
      await store.saveProgress(simulatedProgress('split', partition, { done: true }));
    const before = shares.length;
    await vi.waitFor(() => expect(shares.length).toBeGreaterThan(before));
    expect(shares.at(-1)).toBeCloseTo(0.8);
  });

  it('regression: a cancel dropped the chunk under way from the progress, though its outputs were written', async () => {
    // The pipeline settles a chunk when the test says so: the cancel comes while one is under way.
    const chunks: PromiseWithResolvers<undefined>[] = [];
    const { store, offered, share } = await replica(1, {
      settled: () => {
        chunks.push(Promise.withResolvers<undefined>());
        return (chunks.at(-1) as PromiseWithResolvers<undefined>).promise;
      },
    });
    const started = job('canceled', Date.now());
    await store.saveJob(started);
    await vi.waitFor(() => expect(chunks).toHaveLength(1));
    await store.saveJob({ ...started, control: 'cancel', controlAt: Date.now() });
    // The chunk's outputs are written after the cancel was asked for.
    await new Promise((resolve) => setTimeout(resolve, 20));
    chunks[0]?.resolve(undefined);

    // Recorded first (docs/RERUNS.md): the counts say what the canceled job wrote.
    await vi.waitFor(() => expect(share('canceled')?.counts.read).toBe(BATCH));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // And nothing after it.
    expect(offered).toHaveLength(1);
    expect(share('canceled')).toMatchObject({ done: false, lastPartnerId: 'P-00009' });
  });
});
