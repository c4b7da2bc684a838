import { describe, expect, it } from 'vitest';
import {
  emptyChanges,
  emptyCounts,
  type RerunJob,
  type RerunPartitionProgress,
} from '../../src/rerun/rerun-job.ts';
import { rerunView, type RerunViewInput } from '../../src/rerun/rerun-view.ts';
import { testJob } from '../support/rerun-records.ts';

const T0 = Date.parse('2030-01-01T00:00:00Z');

const job = (over: Partial<RerunJob> = {}): RerunJob =>
  testJob('job-1', 'partners', { createdAt: T0, controlAt: T0, ...over });

const part = (partition: number, over: Partial<RerunPartitionProgress> = {}): RerunPartitionProgress => ({
  jobId: 'job-1',
  partition,
  total: 100,
  lastPartnerId: null,
  done: false,
  counts: emptyCounts(),
  changes: emptyChanges(),
  startedAt: T0 + 1_000,
  updatedAt: T0 + 1_000,
  ...over,
});

const read = (n: number, over: Partial<RerunPartitionProgress['counts']> = {}) => ({
  ...emptyCounts(),
  read: n,
  ...over,
});

/** The view of `subject` among `others`, each job with its own progress records. */
function view(
  subject: RerunJob,
  progress: RerunPartitionProgress[],
  options: {
    partitions?: number | undefined;
    now?: number;
    others?: [RerunJob, RerunPartitionProgress[]][];
  } = {},
) {
  const all = new Map<string, [RerunJob, RerunPartitionProgress[]]>();
  for (const [j, p] of options.others ?? []) all.set(j.id, [j, p]);
  all.set(subject.id, [subject, progress]);
  const asMap = (records: RerunPartitionProgress[]) => new Map(records.map((p) => [p.partition, p]));
  const input: RerunViewInput = {
    job: subject,
    progress: asMap(progress),
    partitions: 'partitions' in options ? options.partitions : 2,
    jobs: [...all.values()].map(([j]) => j),
    progressOf: (id) => asMap(all.get(id)?.[1] ?? []),
    now: options.now ?? T0 + 5_000,
  };
  return rerunView(input);
}

describe('rerunView', () => {
  it('is CREATED before any partition started, SCHEDULED while startAt is ahead', () => {
    expect(view(job(), [])).toMatchObject({ status: 'CREATED', progress: 0, ended: false });
    const later = view(job({ startAt: T0 + 60_000 }), [], { now: T0 });
    expect(later.status).toBe('SCHEDULED');
    expect(later.message).toBe('starts at 2030-01-01T00:01:00.000Z');
    expect(view(job({ startAt: T0 + 60_000 }), [], { now: T0 + 60_001 }).status).toBe('CREATED');
  });

  it('is RUNNING once a partition started, and cannot reach 100 before every partition started', () => {
    const v = view(job(), [part(0, { total: 100, counts: read(100), done: true, updatedAt: T0 + 11_000 })]);
    expect(v.status).toBe('RUNNING');
    // One of two partitions done: the other counts as the started one's 100, none read.
    expect(v.progress).toBe(50);
    expect(v.total).toBe(200);
    expect(v.partitions).toEqual({ count: 2, started: 1, done: 1 });
  });

  it('sums counts and changes over partitions, with progress as read of total', () => {
    const v = view(job(), [
      part(0, {
        total: 300,
        counts: read(150, { lookedUp: 150, changed: 10, unchanged: 140 }),
        changes: { ...emptyChanges(), gainedMatch: 4, svcIdChanged: 6 },
      }),
      part(1, {
        total: 100,
        counts: read(50, { lookedUp: 49, failed: 1, superseded: 2 }),
        changes: { ...emptyChanges(), lostMatch: 1 },
      }),
    ]);
    expect(v.progress).toBe(50);
    expect(v.counts).toEqual({
      read: 200,
      lookedUp: 199,
      changed: 10,
      unchanged: 140,
      failed: 1,
      superseded: 2,
    });
    expect(v.changes).toEqual({ gainedMatch: 4, lostMatch: 1, svcIdChanged: 6, outcomeChanged: 0 });
  });

  it('is FINISHED at 100 when every partition of the input topic is done, with the last finish time', () => {
    const v = view(job(), [
      part(0, { counts: read(100), done: true, finishedAt: T0 + 9_000, updatedAt: T0 + 9_000 }),
      part(1, { counts: read(100), done: true, finishedAt: T0 + 21_000, updatedAt: T0 + 21_000 }),
    ]);
    expect(v).toMatchObject({ status: 'FINISHED', ended: true, progress: 100, finishedAt: T0 + 21_000 });
    expect(v.startedAt).toBe(T0 + 1_000);
    expect(v.etaMs).toBeUndefined();
    // 200 partners in the 20 s from the first start to the last finish.
    expect(v.rate).toBe(10);
  });

  it('is not FINISHED while a partition of the topic has no progress, whatever else is done', () => {
    const v = view(job(), [part(0, { done: true, counts: read(100) })], { partitions: 3 });
    expect(v.status).toBe('RUNNING');
    expect(v.progress).toBeLessThan(100);
  });

  it('progress of partitions holding nothing the job chooses follows the partitions done', () => {
    const v = view(job(), [part(0, { total: 0, done: true })], { partitions: 4 });
    expect(v.progress).toBe(25);
    expect(view(job(), [part(0, { total: 0, done: true }), part(1, { total: 0, done: true })]).progress).toBe(
      100,
    );
  });

  it('is DIED with the failing partitions in the message, before any other status', () => {
    const v = view(job({ control: 'cancel' }), [
      part(1, { error: 'lookup refused: TASK_INVALID_INPUT', updatedAt: T0 + 4_000 }),
      part(0, { done: true, counts: read(100), updatedAt: T0 + 3_000 }),
    ]);
    expect(v).toMatchObject({ status: 'DIED', ended: true, paused: false, finishedAt: T0 + 4_000 });
    expect(v.message).toBe('partition 1: lookup refused: TASK_INVALID_INPUT');
  });

  it('is CANCELED on a cancel, ended when the last of the cancel and the progress was written', () => {
    const v = view(job({ control: 'cancel', controlAt: T0 + 2_000 }), [part(0, { updatedAt: T0 + 3_000 })]);
    expect(v).toMatchObject({ status: 'CANCELED', ended: true, finishedAt: T0 + 3_000 });
    expect(v.message).toBe('canceled at 2030-01-01T00:00:02.000Z');
    expect(view(job({ control: 'cancel' }), []).status).toBe('CANCELED');
  });

  it('a cancel after every partition was done leaves it FINISHED', () => {
    const done = [0, 1].map((p) => part(p, { done: true, counts: read(100) }));
    expect(view(job({ control: 'cancel' }), done).status).toBe('FINISHED');
  });

  it('is paused on a pause request until it ends, without a time left while paused', () => {
    const progress = [part(0, { counts: read(10), updatedAt: T0 + 2_000 })];
    const paused = view(job({ control: 'pause', controlAt: T0 + 3_000 }), progress);
    expect(paused).toMatchObject({
      status: 'RUNNING',
      paused: true,
      message: 'paused since 2030-01-01T00:00:03.000Z',
    });
    expect(paused.etaMs).toBeUndefined();
    const done = [0, 1].map((p) => part(p, { done: true, counts: read(100) }));
    expect(view(job({ control: 'pause' }), done).paused).toBe(false);
  });

  it('gives a rate and the time left at that rate while running', () => {
    // 100 of 400 partners read in the 10 s since the first start.
    const v = view(job(), [
      part(0, { total: 200, counts: read(60), startedAt: T0, updatedAt: T0 + 10_000 }),
      part(1, { total: 200, counts: read(40), startedAt: T0 + 1_000, updatedAt: T0 + 8_000 }),
    ]);
    expect(v.rate).toBe(10);
    expect(v.etaMs).toBe(30_000);
  });

  it('waits for the earliest job of the same input topic that has not ended', () => {
    const first = job({ id: 'a-first', createdAt: T0 - 10 });
    const sameTimeEarlierId = job({ id: 'b-same-time', createdAt: T0 });
    const subject = job({ id: 'c-subject', createdAt: T0 });
    const otherTopic = job({ id: 'other-topic', inputTopic: 'suppliers', createdAt: T0 - 100 });
    const others: [RerunJob, RerunPartitionProgress[]][] = [
      [otherTopic, []],
      [first, [part(0, { jobId: first.id, counts: read(5) })]],
      [sameTimeEarlierId, []],
    ];
    const v = view(subject, [], { others });
    expect(v.waitingFor).toBe('a-first');
    expect(v.message).toBe('waiting for rerun a-first');

    // Once the first ended, the next in the order (same time, smaller id) is the one waited for.
    const ended: [RerunJob, RerunPartitionProgress[]][] = [
      [otherTopic, []],
      [{ ...first, control: 'cancel' }, []],
      [sameTimeEarlierId, []],
    ];
    expect(view(subject, [], { others: ended }).waitingFor).toBe('b-same-time');
    // The earlier job itself waits for nothing later in the order.
    expect(view(sameTimeEarlierId, [], { others: [[subject, []]] }).waitingFor).toBeUndefined();
  });

  it('lets a job that has started run to its end before one created earlier that has not (a scheduled slot)', () => {
    const running = job({ id: 'rerun-cli', createdAt: T0 + 5_000 });
    const slot = job({ id: 'scheduled-slot', createdAt: T0 });
    const runningProgress = [part(0, { jobId: running.id, counts: read(20) })];
    expect(view(slot, [], { others: [[running, runningProgress]] }).waitingFor).toBe('rerun-cli');
    expect(view(running, runningProgress, { others: [[slot, []]] }).waitingFor).toBeUndefined();
  });

  it('says so when the input topic does not exist, and never calls the job FINISHED then', () => {
    const v = view(job(), [part(0, { done: true })], { partitions: undefined });
    expect(v.status).toBe('RUNNING');
    expect(v.message).toBe('input topic partners does not exist');
    expect(v.total).toBeUndefined();
  });
});
