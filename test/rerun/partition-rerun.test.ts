// One partition's share of a rerun against the real partner state (SQLite in a temporary
// directory); the pipeline it offers chunks to and the job store are in-memory stand-ins that
// settle every partner at once and keep progress in a map.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMetrics, subscribeMetrics } from '../../src/observability/index.ts';
import type { PartitionRef } from '../../src/pipeline/ports.ts';
import { PartitionRerun, type RerunHost } from '../../src/rerun/partition-rerun.ts';
import type { RerunJob, RerunJobStore, RerunPartitionProgress } from '../../src/rerun/rerun-job.ts';
import { PartnerState } from '../../src/state/partner-state.ts';
import { storedPartner } from '../support/stored-partners.ts';

const ref: PartitionRef = { topic: 'partners', partition: 0 };
const PARTNERS = 2_000;

const job = (over: Partial<RerunJob> = {}): RerunJob => ({
  id: 'job-1',
  inputTopic: ref.topic,
  filter: {},
  batchSize: 50,
  tags: [],
  initialize: false,
  dryRun: false,
  quotaShare: 1,
  control: 'run',
  createdAt: 0,
  controlAt: 0,
  ...over,
});

function memoryJobs(): RerunJobStore {
  const progress = new Map<number, RerunPartitionProgress>();
  return {
    load: async () => {},
    follow: async () => async () => {},
    jobs: () => [],
    job: () => undefined,
    progress: () => progress,
    saveJob: async () => {},
    createJob: async (_job, admit) => {
      await admit();
      return 'written';
    },
    saveProgress: async (saved) => void progress.set(saved.partition, saved),
    close: async () => {},
  };
}

const states: PartnerState[] = [];
afterEach(() => {
  for (const state of states.splice(0)) state.close();
});

/** A partition of 2,000 stored partners, every tenth an ERP partner, the rest CRM. */
async function storedPartition(): Promise<PartnerState> {
  const state = new PartnerState({ dir: mkdtempSync(join(tmpdir(), 'partition-rerun-')) });
  states.push(state);
  await state.restore([ref]);
  for (let i = 0; i < PARTNERS; i += 1) {
    const partnerId = `P-${String(i).padStart(5, '0')}`;
    const stored = storedPartner(partnerId);
    stored.record.sourceSystem = i % 10 === 0 ? 'ERP' : 'CRM';
    state.set(ref, partnerId, stored);
  }
  return state;
}

/**
 * Runs the share to its end; what the pipeline was offered per chunk, the rows read from the
 * state, and the most pages read in one turn of the event loop (counted by a callback that
 * runs once per turn).
 */
async function runShare(state: PartnerState, rerunJob: RerunJob, duringFirstChunk: () => void = () => {}) {
  const idsRead: string[] = [];
  let pagesThisTurn = 0;
  let mostPagesInATurn = 0;
  let turns = setImmediate(function nextTurn() {
    pagesThisTurn = 0;
    turns = setImmediate(nextTurn);
  });
  const chunks: string[][] = [];
  const host: RerunHost = {
    partitions: () => [],
    onPartitions: () => () => {},
    rerun: (_ref, _epoch, partners) => {
      if (chunks.length === 0) duringFirstChunk();
      chunks.push(partners.map(({ partnerId }) => partnerId));
      return partners.map(async () => ({ kind: 'unchanged' as const, outcome: 'NO_MATCH' as const }));
    },
    releaseRerun: async () => {},
  };
  const rerun = new PartitionRerun(
    {
      host,
      jobs: memoryJobs(),
      state: {
        scan: (scanned, after, limit, until) => {
          const rows = state.scan(scanned, after, limit, until);
          idsRead.push(...rows.map((row) => row.partnerId));
          pagesThisTurn += 1;
          mostPagesInATurn = Math.max(mostPagesInATurn, pagesThisTurn);
          return rows;
        },
      },
      job: () => rerunJob,
      quotaShare: () => rerunJob.quotaShare,
      changed: () => new Promise(() => {}),
    },
    ref,
    0,
  );
  try {
    expect(await rerun.run()).toBe(true);
  } finally {
    clearImmediate(turns);
  }
  return { chunks, rowsRead: idsRead.length, idsRead, mostPagesInATurn };
}

describe('PartitionRerun', () => {
  it('regression: a chunk of 50 read 1,000 stored partners to offer 50 (each row parsed and thrown away)', async () => {
    const state = await storedPartition();
    const { chunks, rowsRead } = await runShare(state, job({ batchSize: 50 }));
    expect(chunks).toHaveLength(PARTNERS / 50);
    expect(chunks.every((chunk) => chunk.length === 50)).toBe(true);
    expect(chunks.flat()).toEqual([...new Set(chunks.flat())].sort());
    // Counting the share's partners reads the partition once; the chunks read it once more,
    // and the last finds the end: nothing beyond that.
    expect(rowsRead).toBe(2 * PARTNERS);
  });

  it('reads on past the partners a filter leaves out, in id order, until a chunk is full', async () => {
    const state = await storedPartition();
    const { chunks, rowsRead } = await runShare(
      state,
      job({ batchSize: 30, filter: { sourceSystems: ['ERP'] } }),
    );
    const chosen = Array.from({ length: PARTNERS / 10 }, (_, i) => `P-${String(i * 10).padStart(5, '0')}`);
    expect(chunks.flat()).toEqual(chosen);
    expect(chunks.slice(0, -1).every((chunk) => chunk.length === 30)).toBe(true);
    // Past the count, each row is needed once; pages that double from what a chunk wants
    // read at most about twice that (a page of 1,000 per chunk read 7,000 here).
    expect(rowsRead - PARTNERS).toBeLessThanOrEqual(2 * PARTNERS);
  });

  it('regression: a chunk read every row a filter left out in one go, holding the event loop (150-350 ms in the benchmark)', async () => {
    const state = await storedPartition();
    // One partner in ten chosen: a chunk of 150 reads about 1,500 rows, in pages that double.
    const { chunks, mostPagesInATurn } = await runShare(
      state,
      job({ batchSize: 150, filter: { sourceSystems: ['ERP'] } }),
    );
    expect(chunks.flat()).toHaveLength(PARTNERS / 10);
    expect(mostPagesInATurn).toBe(1);
  });

  it('regression: a share read every partner stored since it started, after its last one, before it knew it was done', async () => {
    const state = await storedPartition();
    const storedSince = (partnerId: string) => {
      const stored = storedPartner(partnerId);
      stored.matchedAt = Date.now();
      state.set(ref, partnerId, stored);
    };
    const { chunks, idsRead } = await runShare(state, job({ batchSize: 500 }), () => {
      // Live records while the share runs: 3,000 new partners whose ids sort after every
      // stored one, and one inside the range the share covers.
      for (let i = 0; i < 3_000; i += 1) storedSince(`Q-${String(i).padStart(5, '0')}`);
      storedSince('P-01000-new');
    });
    expect(chunks.flat()).toHaveLength(PARTNERS);
    expect(chunks.flat().every((partnerId) => partnerId.startsWith('P-') && !partnerId.endsWith('new'))).toBe(
      true,
    );
    // The chunks read the new partner inside the range and leave it out; the 3,000 after the
    // range's last id are not read at all (every one was, to be filtered out).
    expect(idsRead).toContain('P-01000-new');
    expect(idsRead.filter((partnerId) => partnerId.startsWith('Q-'))).toEqual([]);
  });

  it('regression: a share resumed after a kill left uncounted the partners whose outputs its lost chunk wrote; now counted by their mark, not looked up again', async () => {
    const state = await storedPartition();
    const startedAt = Date.now();
    // What a share killed mid-chunk leaves: progress up to P-00999, and the lost chunk's
    // first 30 partners stored with this job's lookup (10 of them gained a match).
    for (let i = 1_000; i < 1_030; i += 1) {
      const partnerId = `P-${String(i).padStart(5, '0')}`;
      const change = i < 1_010 ? ('gainedMatch' as const) : null;
      state.set(
        ref,
        partnerId,
        storedPartner(partnerId, { matchedAt: startedAt + 1, rerun: { jobId: 'job-1', change } }),
      );
    }
    // Another job's mark is no count of this one: P-01030 is looked up again.
    state.set(ref, 'P-01030', storedPartner('P-01030', { rerun: { jobId: 'job-0', change: null } }));
    const jobs = memoryJobs();
    await jobs.saveProgress({
      jobId: 'job-1',
      partition: ref.partition,
      total: PARTNERS,
      lastPartnerId: 'P-00999',
      endPartnerId: 'P-01999',
      done: false,
      counts: { read: 1_000, lookedUp: 1_000, changed: 0, unchanged: 1_000, failed: 0, superseded: 0 },
      changes: { gainedMatch: 0, lostMatch: 0, svcIdChanged: 0, outcomeChanged: 0 },
      startedAt,
      updatedAt: startedAt,
    });
    const offered: string[] = [];
    const host: RerunHost = {
      partitions: () => [],
      onPartitions: () => () => {},
      rerun: (_ref, _epoch, partners) => {
        offered.push(...partners.map(({ partnerId }) => partnerId));
        return partners.map(async () => ({ kind: 'unchanged' as const, outcome: 'NO_MATCH' as const }));
      },
      releaseRerun: async () => {},
    };
    const rerun = new PartitionRerun(
      {
        host,
        jobs,
        state,
        job: () => job({ batchSize: 500 }),
        quotaShare: () => 0.5,
        changed: () => new Promise(() => {}),
      },
      ref,
      0,
    );
    expect(await rerun.run()).toBe(true);
    expect(offered).toHaveLength(970);
    expect(offered[0]).toBe('P-01030');
    expect(jobs.progress('job-1').get(ref.partition)).toMatchObject({
      done: true,
      counts: { read: 2_000, lookedUp: 2_000, changed: 10, unchanged: 1_990 },
      changes: { gainedMatch: 10 },
    });
  });

  it('stops each share at the job limit, however large the chunk', async () => {
    const state = await storedPartition();
    const { chunks } = await runShare(state, job({ batchSize: 500, limit: 120 }));
    expect(chunks.map((chunk) => chunk.length)).toEqual([120]);
  });

  it("regression: a share whose partition moved leaves no rerun_progress_ratio series behind (its former owner kept exporting its last ratio beside the new owner's)", async () => {
    const state = await storedPartition();
    const metrics = createMetrics();
    const unsubscribe = subscribeMetrics(metrics);
    const ratio = async () =>
      (await metrics.registry.getSingleMetric('partner_enrich_rerun_progress_ratio')?.get())?.values.find(
        (sample) => sample.labels.rerun === 'job-1' && sample.labels.partition === '0',
      )?.value;
    let chunks = 0;
    let ratioAfterFirstChunk: number | undefined;
    const host: RerunHost = {
      partitions: () => [],
      onPartitions: () => () => {},
      // The first chunk is settled; the partition is revoked during the second: its work is dropped.
      rerun: (_ref, _epoch, partners) => {
        chunks += 1;
        return partners.map(async () =>
          chunks === 1
            ? { kind: 'unchanged' as const, outcome: 'NO_MATCH' as const }
            : { kind: 'dropped' as const },
        );
      },
      releaseRerun: async () => {
        ratioAfterFirstChunk = await ratio();
      },
    };
    const rerun = new PartitionRerun(
      {
        host,
        jobs: memoryJobs(),
        state,
        job: () => job({ batchSize: 500 }),
        quotaShare: () => 0.5,
        changed: () => new Promise(() => {}),
      },
      ref,
      0,
    );
    try {
      expect(await rerun.run()).toBe(false);
      expect(ratioAfterFirstChunk).toBe(500 / PARTNERS);
      expect(await ratio()).toBeUndefined();
    } finally {
      unsubscribe();
    }
  });

  it('regression: a cancel asked for while the share waited for headroom (a busy event loop) still let it begin a chunk', async () => {
    const state = await storedPartition();
    let current = job({ batchSize: 50 });
    const offered: number[] = [];
    const room = Promise.withResolvers<undefined>();
    const host: RerunHost = {
      partitions: () => [],
      onPartitions: () => () => {},
      rerun: (_ref, _epoch, partners) => {
        offered.push(partners.length);
        return partners.map(async () => ({ kind: 'unchanged' as const, outcome: 'NO_MATCH' as const }));
      },
      releaseRerun: async () => {},
    };
    const rerun = new PartitionRerun(
      {
        host,
        jobs: memoryJobs(),
        state,
        job: () => current,
        quotaShare: () => current.quotaShare,
        changed: () => new Promise(() => {}),
        headroom: () => room.promise,
      },
      ref,
      0,
    );
    const running = rerun.run();
    await new Promise((resolve) => setTimeout(resolve, 20));
    current = { ...current, control: 'cancel' };
    room.resolve(undefined);
    expect(await running).toBe(false);
    expect(offered).toEqual([]);
  });
});
