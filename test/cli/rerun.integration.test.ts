// `partner-enrich rerun` as operators run it: separate processes against the real broker,
// sharing nothing but the state topic. No executor exists in these tests: where a job must
// move, the test writes the progress an executor would write (simulatedProgress).
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { KafkaRerunJobStore } from '../../src/kafka/rerun-store.ts';
import { TopicReaders } from '../../src/kafka/topic-reader.ts';
import type { RerunJob } from '../../src/rerun/rerun-job.ts';
import { runCli, startCli, type CliResult } from '../support/cli.ts';
import { eventually, kafkaClient, uniqueName, withTopics } from '../support/kafka.ts';
import { simulatedProgress } from '../support/rerun-records.ts';

const kafka = kafkaClient();
const state = uniqueName('rerun-cli.state');
/** One input topic per group of tests: jobs of one topic wait for each other. */
const controlled = uniqueName('rerun-cli.controlled');
const followed = uniqueName('rerun-cli.followed');
const env = {
  PARTNER_ENRICH_KAFKA__BROKERS: inject('kafkaBrokers'),
  PARTNER_ENRICH_TOPICS__STATE: state,
  PARTNER_ENRICH_TOPICS__INPUT: controlled,
  // The configuration is validated whole, for every command.
  PARTNER_ENRICH_REFDATA__API_KEY: 'unused-by-rerun',
};
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ cleanup } = await withTopics(kafka, [
    { topic: state, numPartitions: 2, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] },
    { topic: controlled, numPartitions: 2 },
    { topic: followed, numPartitions: 2 },
  ]));
});
afterAll(() => cleanup());

/** The job as the state topic holds it now, read by a store of the test's own. */
async function storedJob(id: string): Promise<RerunJob | undefined> {
  const store = new KafkaRerunJobStore(new TopicReaders(kafka), state);
  await store.load();
  await store.close();
  return store.job(id);
}

const rerun = (...args: string[]): Promise<CliResult> => runCli(['rerun', ...args], env);

describe('rerun options', () => {
  it('are refused before anything is written, each with what the option needs', async () => {
    const results = await Promise.all([
      rerun('start', '--batch-size', '501'),
      rerun('start', '--tag', 'a', '--tag', 'a'),
      rerun('start', '--quota-share', '0'),
      rerun('start', '--not-looked-up-since', 'yesterday'),
      rerun('start', '--outcome', 'GOOD'),
      rerun('throttle', 'some-job'),
    ]);
    for (const r of results) expect(r.code, r.stderr).toBe(1);
    const [batch, tags, share, since, outcome, throttle] = results.map((r) => r.stderr) as string[];
    expect(batch).toContain('--batch-size must be a whole number in decimal digits from 1 to 500.');
    expect(tags).toContain('a is given twice; tags must be unique (at most 10).');
    expect(share).toContain('--quota-share must be a number in decimal digits, more than 0 and at most 1.');
    expect(since).toContain('--not-looked-up-since must be an ISO 8601 date or time');
    expect(outcome).toContain('GOOD is not an outcome; one of MATCH, MAYBE_MATCH, NO_MATCH, FAILED.');
    expect(throttle).toContain("required option '--quota-share <share>' not specified");
  });

  it('regression: a date that does not exist (February 30) was taken as the days after it, not refused', async () => {
    // A topic that does not exist: where the date is taken, nothing is written either (exit 2).
    const topic = uniqueName('no-such-topic');
    const results = await Promise.all([
      rerun('start', '--topic', topic, '--start-at', '2030-02-30T02:00:00Z'),
      rerun('start', '--topic', topic, '--not-looked-up-since', '2030-04-31'),
    ]);
    for (const r of results) expect(r.code, r.stderr).toBe(1);
    const [startAt, since] = results.map((r) => r.stderr) as string[];
    expect(startAt).toContain('--start-at must be an ISO 8601 date or time');
    expect(startAt).toContain('2030-02-30 is not a day of the calendar');
    expect(since).toContain('2030-04-31 is not a day of the calendar');
  });
});

describe('rerun jobs from separate processes', () => {
  it('start writes a job that status and list of another process show; --if-idle then refuses and writes nothing', async () => {
    const started = await rerun(
      'start',
      '--id',
      'nightly-1',
      '--country',
      'de',
      'AT',
      '--outcome',
      'NO_MATCH',
      '--not-looked-up-since',
      '2030-01-31',
      '--batch-size',
      '100',
      '--tag',
      'nightly',
      '--tag',
      'refresh',
      '--dry-run',
      '--quota-share',
      '0.25',
    );
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout.trim()).toBe('nightly-1');

    const [status, list, busy, unknown, missing] = await Promise.all([
      rerun('status', 'nightly-1', '--json'),
      rerun('list'),
      rerun('start', '--if-idle', '--id', 'nightly-2'),
      rerun('start', '--topic', uniqueName('no-such-topic')),
      rerun('status', 'no-such-job'),
    ]);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      status: 'CREATED',
      progress: 0,
      paused: false,
      job: {
        id: 'nightly-1',
        inputTopic: controlled,
        filter: {
          countries: ['DE', 'AT'],
          outcomes: ['NO_MATCH'],
          notLookedUpSince: Date.parse('2030-01-31'),
        },
        batchSize: 100,
        tags: ['nightly', 'refresh'],
        dryRun: true,
        initialize: false,
        quotaShare: 0.25,
        control: 'run',
      },
    });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/│ nightly-1 +│ \S+ +│ CREATED +│ 0 % +│/);

    expect(busy.code, busy.stderr).toBe(5);
    expect(busy.stderr).toContain('RERUN_SCOPE_BUSY: rerun nightly-1 of input topic');
    expect(await storedJob('nightly-2')).toBeUndefined();
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('RERUN_UNKNOWN_TOPIC');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('RERUN_NOT_FOUND: no rerun no-such-job');
  });

  it('pause, resume, throttle and cancel rewrite the job; an ended job refuses them', async () => {
    expect((await rerun('start', '--id', 'controlled-1')).code).toBe(0);
    const createdAt = (await storedJob('controlled-1'))?.controlAt as number;

    const paused = await rerun('pause', 'controlled-1');
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toContain('rerun controlled-1: CREATED (paused)');
    const afterPause = await storedJob('controlled-1');
    expect(afterPause?.control).toBe('pause');
    expect(afterPause?.controlAt).toBeGreaterThanOrEqual(createdAt);

    expect((await rerun('resume', 'controlled-1')).code).toBe(0);
    expect((await storedJob('controlled-1'))?.control).toBe('run');

    const throttled = await rerun('throttle', 'controlled-1', '--quota-share', '0.1');
    expect(throttled.code, throttled.stderr).toBe(0);
    expect(await storedJob('controlled-1')).toMatchObject({ control: 'run', quotaShare: 0.1 });

    expect((await rerun('cancel', 'controlled-1')).code).toBe(0);
    const status = await rerun('status', 'controlled-1');
    expect(status.stdout).toMatch(/^status +CANCELED$/m);

    const refused = await rerun('throttle', 'controlled-1', '--quota-share', '0.9');
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain(
      'RERUN_ENDED: rerun controlled-1 CANCELED; there is nothing to throttle',
    );
    expect((await storedJob('controlled-1'))?.quotaShare).toBe(0.1);
  });
});

describe("regression: a control written between another's read and its write was overwritten (a cancel lost under a throttle); now each is written on the other", () => {
  // Each control read the job and wrote it whole: a cancel written while a throttle was
  // between its read and its write was undone by the throttle (the job went back to run and
  // its executors went on). The test's own store is the writer held between its read and its
  // write (its change runs while a `rerun` process writes), so the overlap happens every time.
  const heldWhile = async (
    id: string,
    other: string[],
    change: (job: RerunJob) => RerunJob,
  ): Promise<CliResult[]> => {
    const held = new KafkaRerunJobStore(new TopicReaders(kafka), state);
    const others: CliResult[] = [];
    try {
      await held.load();
      await held.updateJob(held.job(id) as RerunJob, async (current) => {
        if (others.length === 0) others.push(await rerun(...other));
        return { ...change(current), controlAt: Date.now() };
      });
    } finally {
      await held.close();
    }
    return others;
  };

  it('a cancel written while a throttle decided stays, with the throttle on it', async () => {
    expect((await rerun('start', '--id', 'raced-cancel')).code).toBe(0);
    const [cancel] = await heldWhile('raced-cancel', ['cancel', 'raced-cancel'], (job) => ({
      ...job,
      quotaShare: 0.2,
    }));
    expect(cancel?.code, cancel?.stderr).toBe(0);
    expect(await storedJob('raced-cancel')).toMatchObject({ control: 'cancel', quotaShare: 0.2 });
    expect((await rerun('status', 'raced-cancel')).stdout).toMatch(/^status +CANCELED$/m);
  });

  it('a throttle written while a pause decided stays, with the pause on it', async () => {
    expect((await rerun('start', '--id', 'raced-pause')).code).toBe(0);
    const [throttle] = await heldWhile(
      'raced-pause',
      ['throttle', 'raced-pause', '--quota-share', '0.3'],
      (job) => ({ ...job, control: 'pause' }),
    );
    expect(throttle?.code, throttle?.stderr).toBe(0);
    expect(await storedJob('raced-pause')).toMatchObject({ control: 'pause', quotaShare: 0.3 });
  });
});

describe('regression: two `rerun start --if-idle` at the same moment could both start a job', () => {
  // Before, each process read the state topic, found the topic idle and wrote its job: a
  // scheduled full-storage rerun started twice paid every lookup twice.
  it('of each pair of processes started together, one writes its job and the other exits 5 writing nothing', async () => {
    const pairs = 8;
    const topics = Array.from({ length: pairs }, () => uniqueName('rerun-cli.race'));
    const created = await withTopics(
      kafka,
      topics.map((topic) => ({ topic, numPartitions: 1 })),
    );
    try {
      const outcomes: string[] = [];
      /** What a start that neither started nor refused printed. */
      const failures: string[] = [];
      for (const topic of topics) {
        const ids = [`${topic}-a`, `${topic}-b`];
        const results = await Promise.all(
          ids.map((id) => rerun('start', '--if-idle', '--topic', topic, '--id', id)),
        );
        // A job is read once its commit's markers are written, a moment after its start exits.
        const started = ids.filter((_, i) => results[i]?.code === 0);
        await eventually(
          async () => (await Promise.all(started.map((id) => storedJob(id)))).every(Boolean),
          30_000,
          'the started jobs',
        );
        const stored = await Promise.all(ids.map((id) => storedJob(id)));
        const jobs = ids.filter((_, i) => stored[i] !== undefined);
        const refusal = results.find((result) => result.code === 5)?.stderr ?? '';
        failures.push(...results.filter((r) => r.code !== 0 && r.code !== 5).map((r) => r.stderr));
        outcomes.push(
          `exits ${results.map((result) => String(result.code)).sort()}, jobs ${jobs.length}, ` +
            `the refusal names it: ${refusal.includes(`RERUN_SCOPE_BUSY: rerun ${jobs[0]} of input topic`)}`,
        );
      }
      expect(outcomes, failures.join('\n')).toEqual(
        Array(pairs).fill('exits 0,5, jobs 1, the refusal names it: true'),
      );
    } finally {
      await created.cleanup();
    }
  });
});

describe('following a rerun', () => {
  const store = new KafkaRerunJobStore(new TopicReaders(kafka), state);
  afterAll(() => store.close());

  /** Starts `rerun start --wait` for `id` and resolves once it wrote the job. */
  async function waiting(id: string, ...args: string[]) {
    const child = startCli(['rerun', 'start', '--topic', followed, '--id', id, '--wait', ...args], env);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => (stdout += chunk));
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    const exit = once(child, 'exit');
    await eventually(
      () => stderr.includes(`started rerun ${id}`) || child.exitCode !== null,
      60_000,
      'the job',
    );
    return {
      result: async (): Promise<CliResult> => ({ code: ((await exit) as [number])[0], stdout, stderr }),
      stderr: () => stderr,
    };
  }

  it('--wait follows the (simulated) progress to FINISHED, printing log lines and the change report, and exits 0', async () => {
    const run = await waiting('followed-ok');
    const counts = (read: number, changed: number) => ({
      ...simulatedProgress('followed-ok', 0).counts,
      read,
      lookedUp: read,
      changed,
      unchanged: read - changed,
    });
    await store.saveProgress(simulatedProgress('followed-ok', 0, { total: 100, counts: counts(50, 5) }));
    await eventually(() => run.stderr().includes('50 of 200 partners read'), 60_000, 'the progress line');
    const changes = { gainedMatch: 3, lostMatch: 1, svcIdChanged: 2, outcomeChanged: 1 };
    await store.saveProgress(
      simulatedProgress('followed-ok', 0, { total: 100, counts: counts(100, 4), done: true, changes }),
    );
    await store.saveProgress(
      simulatedProgress('followed-ok', 1, { total: 60, counts: counts(60, 3), done: true }),
    );
    const result = await run.result();
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/rerun followed-ok: RUNNING, 25 %, 50 of 200 partners read/);
    expect(result.stdout).toMatch(/^status +FINISHED$/m);
    expect(result.stdout).toMatch(/^progress +100 %$/m);
    expect(result.stdout).toMatch(/^partners read +160$/m);
    expect(result.stdout).toMatch(/^changed +7$/m);
    expect(result.stdout).toMatch(/^ {2}gained a match +3$/m);
    expect(result.stdout).toMatch(/^ {2}lost the match +1$/m);
  });

  it('--wait exits 3 when a partition died, naming it; status --follow exits 4 after --timeout', async () => {
    const run = await waiting('followed-died');
    await store.saveProgress(
      simulatedProgress('followed-died', 1, { error: 'lookups refused: TASK_INVALID_INPUT' }),
    );
    const result = await run.result();
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toContain(
      'RERUN_NOT_FINISHED: rerun followed-died DIED: partition 1: lookups refused: TASK_INVALID_INPUT',
    );
    expect(result.stdout).toMatch(/^status +DIED$/m);

    expect((await rerun('start', '--topic', followed, '--id', 'followed-stuck')).code).toBe(0);
    const timedOut = await rerun('status', 'followed-stuck', '--follow', '--timeout', '1');
    expect(timedOut.code, timedOut.stderr).toBe(4);
    expect(timedOut.stderr).toContain('RERUN_WAIT_TIMEOUT: rerun followed-stuck is CREATED after --timeout');
  });

  it('regression: status --follow with a --timeout of 30 days (beyond the 24.8 days a timer holds) timed out at once, exit 4', async () => {
    expect((await rerun('start', '--topic', followed, '--id', 'followed-month')).code).toBe(0);
    const child = startCli(['rerun', 'status', 'followed-month', '--follow', '--timeout', '2592000'], env);
    let stderr = '';
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    const exit = once(child, 'exit');
    try {
      await eventually(
        () => stderr.includes('rerun followed-month: CREATED') || child.exitCode !== null,
        60_000,
        'the first progress line',
      );
      // Still following a few redraws later.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(child.exitCode, stderr).toBeNull();
      expect(stderr).not.toContain('RERUN_WAIT_TIMEOUT');
    } finally {
      child.kill('SIGTERM');
      await exit;
    }
  });
});
