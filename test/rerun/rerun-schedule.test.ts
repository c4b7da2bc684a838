import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { capturedLogger } from '../support/captured-log.ts';
import {
  emptyChanges,
  emptyCounts,
  type RerunJob,
  isEnded,
  type RerunJobStore,
  type RerunPartitionProgress,
} from '../../src/rerun/rerun-job.ts';
import {
  DEFAULT_SCHEDULED_BATCH_SIZE,
  DEFAULT_SCHEDULED_QUOTA_SHARE,
  scheduledJobId,
  scheduleSlot,
  startRerunSchedule,
  type Clock,
  type RerunScheduleOptions,
} from '../../src/rerun/rerun-schedule.ts';

/**
 * Test double of the state topic the real (Kafka) store keeps jobs in: an append-only log
 * shared by every replica's store. The integration test runs the schedule on the real one.
 */
class InMemoryStateTopicDouble {
  readonly records: (
    { kind: 'job'; job: RerunJob } | { kind: 'progress'; progress: RerunPartitionProgress }
  )[] = [];
  /** The creation under way: creations of jobs are one at a time, as the real store's fence makes them. */
  creating: Promise<unknown> = Promise.resolve();
}

/**
 * Test double of RerunJobStore: one replica's view of the shared log, which, like the real
 * store, sees what others wrote only once it reads (load), and keeps the latest record per key.
 */
class InMemoryRerunJobStoreDouble implements RerunJobStore {
  readonly #topic: InMemoryStateTopicDouble;
  #read = 0;
  readonly #jobs = new Map<string, RerunJob>();
  readonly #progress = new Map<string, Map<number, RerunPartitionProgress>>();
  /** Jobs this replica wrote, in order. */
  readonly written: RerunJob[] = [];
  failWrites = false;

  constructor(topic: InMemoryStateTopicDouble) {
    this.#topic = topic;
  }

  load(): Promise<void> {
    for (const record of this.#topic.records.slice(this.#read)) {
      if (record.kind === 'job') this.#jobs.set(record.job.id, record.job);
      else {
        const shares = this.#progress.get(record.progress.jobId) ?? new Map<number, RerunPartitionProgress>();
        shares.set(record.progress.partition, record.progress);
        this.#progress.set(record.progress.jobId, shares);
      }
    }
    this.#read = this.#topic.records.length;
    return Promise.resolve();
  }

  follow(): Promise<() => Promise<void>> {
    return Promise.reject(new Error('the schedule reads with load(), never follows'));
  }

  jobs(): RerunJob[] {
    return [...this.#jobs.values()];
  }

  job(jobId: string): RerunJob | undefined {
    return this.#jobs.get(jobId);
  }

  progress(jobId: string): Map<number, RerunPartitionProgress> {
    return new Map(this.#progress.get(jobId));
  }

  saveJob(job: RerunJob): Promise<void> {
    if (this.failWrites) return Promise.reject(new Error('broker unavailable'));
    this.written.push(job);
    this.#topic.records.push({ kind: 'job', job });
    return this.load();
  }

  /** Reads, decides and writes after the creation before it, on any store of the topic, is over. */
  createJob(job: RerunJob, admit: () => Promise<void>): Promise<'written' | 'found'> {
    const created = this.#topic.creating.then(async () => {
      await this.load();
      await admit();
      await this.saveJob(job);
      return 'written' as const;
    });
    this.#topic.creating = created.catch(() => {});
    return created;
  }

  saveProgress(progress: RerunPartitionProgress): Promise<void> {
    this.#topic.records.push({ kind: 'progress', progress });
    return this.load();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** A clock whose time moves only when the test says, calling back the timers it passes. */
class ManualClock implements Clock {
  #time: number;
  #timers: { at: number; callback: () => void }[] = [];
  /** Every delay asked for, in order. */
  readonly delays: number[] = [];

  constructor(start: string) {
    this.#time = Date.parse(start);
  }

  now(): number {
    return this.#time;
  }

  setTimer(callback: () => void, ms: number): () => void {
    const timer = { at: this.#time + ms, callback };
    this.delays.push(ms);
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((pending) => pending !== timer);
    };
  }

  get pending(): number {
    return this.#timers.length;
  }

  /** Moves to `iso`, calling back each timer due on the way at its own time. */
  advanceTo(iso: string): void {
    const to = Date.parse(iso);
    for (;;) {
      const due = this.#timers.filter((timer) => timer.at <= to).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.#timers = this.#timers.filter((timer) => timer !== due);
      this.#time = due.at;
      due.callback();
    }
    this.#time = to;
  }
}

const TOPIC = 'partners.input';
const PARTITIONS = 3;
const settings = { inputTopic: TOPIC, schedule: 'every 24h' };

function storeWith(...jobs: RerunJob[]) {
  const topic = new InMemoryStateTopicDouble();
  const store = new InMemoryRerunJobStoreDouble(topic);
  for (const job of jobs) topic.records.push({ kind: 'job', job });
  return { topic, store };
}

function job(id: string, overrides: Partial<RerunJob> = {}): RerunJob {
  return {
    id,
    inputTopic: TOPIC,
    filter: {},
    batchSize: 100,
    tags: [],
    initialize: false,
    dryRun: false,
    quotaShare: 0.2,
    control: 'run',
    createdAt: 0,
    controlAt: 0,
    ...overrides,
  };
}

function progress(jobId: string, partition: number, overrides: Partial<RerunPartitionProgress> = {}) {
  return {
    jobId,
    partition,
    total: 10,
    lastPartnerId: null,
    done: false,
    counts: emptyCounts(),
    changes: emptyChanges(),
    startedAt: 0,
    updatedAt: 0,
    ...overrides,
  } satisfies RerunPartitionProgress;
}

const SLOT = Date.parse('2025-03-10T00:00:00Z');

describe('scheduled job ids', () => {
  it('are the slot in UTC to the second and the input topic', () => {
    expect(scheduledJobId(SLOT, TOPIC)).toBe('scheduled-20250310T000000Z-partners.input');
    expect(scheduledJobId(Date.parse('2025-12-31T23:30:15.000Z'), 'other')).toBe(
      'scheduled-20251231T233015Z-other',
    );
  });
});

describe('isEnded', () => {
  const running = job('a');

  it('is false while any partition has not finished', () => {
    const shares = new Map([
      [0, progress('a', 0, { done: true })],
      [1, progress('a', 1)],
    ]);
    expect(isEnded(running, shares, 2)).toBe(false);
    expect(isEnded(running, new Map(), 2)).toBe(false);
  });

  it('is false while a partition has no progress yet, even if the others are done', () => {
    const shares = new Map([
      [0, progress('a', 0, { done: true })],
      [2, progress('a', 2, { done: true })],
    ]);
    expect(isEnded(running, shares, 3)).toBe(false);
  });

  it('is true once every partition is done, once one died, or once cancelled', () => {
    const done = new Map([0, 1].map((p) => [p, progress('a', p, { done: true })]));
    expect(isEnded(running, done, 2)).toBe(true);
    expect(isEnded(running, new Map([[1, progress('a', 1, { error: 'LOOKUP_FAILED' })]]), 2)).toBe(true);
    expect(isEnded(job('a', { control: 'cancel' }), new Map(), 2)).toBe(true);
  });
});

describe('a slot', () => {
  it('creates the job for the whole storage of the input topic, with the defaults of a scheduled rerun', async () => {
    const { store } = storeWith();
    expect(await scheduleSlot(store, SLOT, settings, PARTITIONS)).toEqual({
      kind: 'created',
      jobId: 'scheduled-20250310T000000Z-partners.input',
    });
    expect(store.job('scheduled-20250310T000000Z-partners.input')).toEqual({
      id: 'scheduled-20250310T000000Z-partners.input',
      inputTopic: TOPIC,
      filter: {},
      batchSize: DEFAULT_SCHEDULED_BATCH_SIZE,
      tags: ['scheduled'],
      initialize: false,
      dryRun: false,
      quotaShare: DEFAULT_SCHEDULED_QUOTA_SHARE,
      schedule: 'every 24h',
      control: 'run',
      createdAt: SLOT,
      controlAt: SLOT,
    } satisfies RerunJob);
  });

  it('takes batchSize and quotaShare from the settings when given', async () => {
    const { store } = storeWith();
    await scheduleSlot(store, SLOT, { ...settings, batchSize: 200, quotaShare: 0.25 }, PARTITIONS);
    expect(store.job(scheduledJobId(SLOT, TOPIC))).toMatchObject({ batchSize: 200, quotaShare: 0.25 });
  });

  it('writes one job across replicas: a replica that reads the job another wrote leaves it alone', async () => {
    const { topic, store: first } = storeWith();
    const second = new InMemoryRerunJobStoreDouble(topic);
    expect((await scheduleSlot(first, SLOT, settings, PARTITIONS)).kind).toBe('created');
    // The job was paused in between: the second replica must not write it back to `run`.
    const paused = { ...job(scheduledJobId(SLOT, TOPIC)), control: 'pause' as const };
    topic.records.push({ kind: 'job', job: paused });
    expect(await scheduleSlot(second, SLOT, settings, PARTITIONS)).toEqual({
      kind: 'exists',
      jobId: scheduledJobId(SLOT, TOPIC),
    });
    expect(second.written).toEqual([]);
    expect(second.job(scheduledJobId(SLOT, TOPIC))?.control).toBe('pause');
  });

  it('decided by two replicas at the same moment is written by one, which the other finds', async () => {
    const { topic, store: first } = storeWith();
    const second = new InMemoryRerunJobStoreDouble(topic);
    const [a, b] = await Promise.all([
      scheduleSlot(first, SLOT, settings, PARTITIONS),
      scheduleSlot(second, SLOT, settings, PARTITIONS),
    ]);
    expect([a.kind, b.kind]).toEqual(['created', 'exists']);
    expect([...first.written, ...second.written].map((written) => written.id)).toEqual([
      scheduledJobId(SLOT, TOPIC),
    ]);
  });

  it('is skipped while a rerun of the same input topic has not ended (Forbid)', async () => {
    const { topic, store } = storeWith(job('manual-1'));
    topic.records.push({ kind: 'progress', progress: progress('manual-1', 0, { done: true }) });
    expect(await scheduleSlot(store, SLOT, settings, PARTITIONS)).toEqual({
      kind: 'skipped',
      jobId: scheduledJobId(SLOT, TOPIC),
      activeJobId: 'manual-1',
    });
    expect(store.written).toEqual([]);
  });

  it('is skipped for a job that was created but waits for its start time', async () => {
    const { store } = storeWith(job('later', { startAt: SLOT + 3_600_000 }));
    expect((await scheduleSlot(store, SLOT, settings, PARTITIONS)).kind).toBe('skipped');
  });

  it('is created when every earlier rerun of the topic ended, or belongs to another topic', async () => {
    const { topic, store } = storeWith(
      job('finished'),
      job('died'),
      job('canceled', { control: 'cancel' }),
      job('other-topic', { inputTopic: 'other.input' }),
    );
    for (let partition = 0; partition < PARTITIONS; partition++)
      topic.records.push({ kind: 'progress', progress: progress('finished', partition, { done: true }) });
    topic.records.push({ kind: 'progress', progress: progress('died', 1, { error: 'boom' }) });
    expect((await scheduleSlot(store, SLOT, settings, PARTITIONS)).kind).toBe('created');
  });

  it("is created beside the same slot's job of another input topic sharing the state topic", async () => {
    const { topic, store } = storeWith();
    const other = new InMemoryRerunJobStoreDouble(topic);
    await scheduleSlot(other, SLOT, { ...settings, inputTopic: 'other.input' }, PARTITIONS);
    expect(await scheduleSlot(store, SLOT, settings, PARTITIONS)).toEqual({
      kind: 'created',
      jobId: 'scheduled-20250310T000000Z-partners.input',
    });
    expect(store.job('scheduled-20250310T000000Z-other.input')?.inputTopic).toBe('other.input');
  });
});

describe('the running schedule', () => {
  function start(
    clock: ManualClock,
    overrides: Partial<RerunScheduleOptions> = {},
    store = storeWith().store,
  ) {
    const { lines, logger } = capturedLogger('debug');
    const schedule = startRerunSchedule({
      spec: { everyMs: 86_400_000 },
      catchUp: false,
      store,
      job: { inputTopic: TOPIC },
      partitionCount: () => Promise.resolve(PARTITIONS),
      logger,
      clock,
      ...overrides,
    });
    const logged = (msg: string) =>
      vi.waitFor(() => {
        const line = lines().find((candidate) => candidate.msg === msg);
        expect(line, msg).toBeDefined();
        return line;
      });
    return { store, schedule, logged };
  }

  it('waits for the next slot without making up the one that passed, then creates its job', async () => {
    const clock = new ManualClock('2025-03-10T07:00:00Z');
    const { store, schedule, logged } = start(clock);
    expect(new Date(schedule.nextSlot ?? 0).toISOString()).toBe('2025-03-11T00:00:00.000Z');
    expect(store.written).toEqual([]);

    clock.advanceTo('2025-03-11T00:00:00Z');
    expect(await logged('scheduled rerun created')).toMatchObject({
      jobId: 'scheduled-20250311T000000Z-partners.input',
      slot: '2025-03-11T00:00:00.000Z',
    });
    await vi.waitFor(() => expect(schedule.nextSlot).toBe(Date.parse('2025-03-12T00:00:00Z')));
    expect(store.written.map((written) => written.schedule)).toEqual(['every 24h']);
    await schedule.stop();
  });

  it('with catchUp, creates the most recent slot that passed at start, if its job does not exist', async () => {
    const clock = new ManualClock('2025-03-10T07:00:00Z');
    const { store, schedule, logged } = start(clock, { catchUp: true });
    await logged('scheduled rerun created');
    expect(store.written.map((written) => written.id)).toEqual(['scheduled-20250310T000000Z-partners.input']);
    await vi.waitFor(() => expect(schedule.nextSlot).toBe(Date.parse('2025-03-11T00:00:00Z')));
    await schedule.stop();
  });

  it('with catchUp, leaves a passed slot alone whose job exists', async () => {
    const clock = new ManualClock('2025-03-10T07:00:00Z');
    const { store, schedule, logged } = start(
      clock,
      { catchUp: true },
      storeWith(job('scheduled-20250310T000000Z-partners.input', { control: 'cancel' })).store,
    );
    expect(await logged('scheduled rerun already created')).toMatchObject({
      jobId: 'scheduled-20250310T000000Z-partners.input',
    });
    expect(store.written).toEqual([]);
    await schedule.stop();
  });

  it('logs a skipped slot and creates the next one once the rerun that blocked it ended', async () => {
    const clock = new ManualClock('2025-03-10T23:00:00Z');
    const { topic, store } = storeWith(job('manual-1'));
    const { schedule, logged } = start(clock, {}, store);

    clock.advanceTo('2025-03-11T00:00:00Z');
    expect(
      await logged('scheduled rerun skipped: a rerun of the same input topic has not ended'),
    ).toMatchObject({ jobId: 'scheduled-20250311T000000Z-partners.input', activeJobId: 'manual-1' });
    await vi.waitFor(() => expect(schedule.nextSlot).toBe(Date.parse('2025-03-12T00:00:00Z')));

    for (let partition = 0; partition < PARTITIONS; partition++)
      topic.records.push({ kind: 'progress', progress: progress('manual-1', partition, { done: true }) });
    clock.advanceTo('2025-03-12T00:00:00Z');
    await logged('scheduled rerun created');
    expect(store.written.map((written) => written.id)).toEqual(['scheduled-20250312T000000Z-partners.input']);
    await schedule.stop();
  });

  it('logs a slot whose job could not be written and goes on to the next', async () => {
    const clock = new ManualClock('2025-03-10T23:00:00Z');
    const { store } = storeWith();
    store.failWrites = true;
    const { schedule, logged } = start(clock, {}, store);
    clock.advanceTo('2025-03-11T00:00:00Z');
    expect(await logged('scheduled rerun could not be created')).toMatchObject({
      slot: '2025-03-11T00:00:00.000Z',
      err: { message: 'broker unavailable' },
    });
    await vi.waitFor(() => expect(schedule.nextSlot).toBe(Date.parse('2025-03-12T00:00:00Z')));
    await schedule.stop();
  });

  it('waits for a slot beyond the longest timer in steps, and creates nothing before it', async () => {
    const clock = new ManualClock('2025-03-01T00:00:00Z');
    const { store, schedule, logged } = start(clock, { spec: { cron: '0 0 1 */3 *' } });
    expect(new Date(schedule.nextSlot ?? 0).toISOString()).toBe('2025-04-01T00:00:00.000Z');
    expect(clock.delays).toEqual([2 ** 31 - 1]);

    clock.advanceTo('2025-03-26T00:00:00Z');
    expect(clock.delays).toHaveLength(2);
    expect(store.written).toEqual([]);

    clock.advanceTo('2025-04-01T00:00:00Z');
    await logged('scheduled rerun created');
    expect(store.written.map((written) => [written.id, written.schedule])).toEqual([
      ['scheduled-20250401T000000Z-partners.input', 'cron 0 0 1 */3 *'],
    ]);
    await schedule.stop();
  });

  it('stops: no timer left, no slot waited for, nothing created afterwards', async () => {
    const clock = new ManualClock('2025-03-10T07:00:00Z');
    const { store, schedule } = start(clock);
    expect(clock.pending).toBe(1);
    await schedule.stop();
    expect(clock.pending).toBe(0);
    expect(schedule.nextSlot).toBeUndefined();
    clock.advanceTo('2025-03-12T00:00:00Z');
    expect(store.written).toEqual([]);
  });

  it('stops after the slot being decided, and arms no further timer', async () => {
    const clock = new ManualClock('2025-03-10T07:00:00Z');
    const { store, schedule } = start(clock, { catchUp: true });
    await schedule.stop();
    expect(store.written.map((written) => written.id)).toEqual(['scheduled-20250310T000000Z-partners.input']);
    expect(clock.pending).toBe(0);
    expect(schedule.nextSlot).toBeUndefined();
  });
});

describe('the system clock', () => {
  it('does not keep a process alive while it waits for a slot', async () => {
    const module = new URL('../../src/rerun/rerun-schedule.ts', import.meta.url).href;
    const script = `const { systemClock } = await import(${JSON.stringify(module)});
      systemClock.setTimer(() => { process.exitCode = 9; }, 3_600_000);`;
    // Kept alive by the timer, the process would outlast the test's timeout, not exit with 0.
    await expect(
      promisify(execFile)(process.execPath, ['--input-type=module', '--eval', script]),
    ).resolves.toMatchObject({ stderr: '' });
  });
});
