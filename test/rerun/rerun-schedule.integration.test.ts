// `run`'s schedule deciding a slot on the real broker, at the same moment as what else
// starts a job of the same input topic: an operator's `rerun start --if-idle`, another
// replica of `run` deciding the same slot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaRerunJobStore } from '../../src/kafka/rerun-store.ts';
import { TopicReaders } from '../../src/kafka/topic-reader.ts';
import { RerunError } from '../../src/rerun/errors.ts';
import { isEnded, type RerunJobStore } from '../../src/rerun/rerun-job.ts';
import { scheduledJobId, scheduleSlot, startRerunSchedule } from '../../src/rerun/rerun-schedule.ts';
import { capturedLogger } from '../support/captured-log.ts';
import { eventually, kafkaClient, uniqueName, withTopics } from '../support/kafka.ts';
import { testJob } from '../support/rerun-records.ts';

const kafka = kafkaClient();
const state = uniqueName('rerun-schedule.state');
const DAY = 86_400_000;
/** Races per test: each of its own input topic and slot. */
const RACES = 8;
const stores: KafkaRerunJobStore[] = [];
const store = () => {
  const created = new KafkaRerunJobStore(new TopicReaders(kafka), state);
  stores.push(created);
  return created;
};
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ cleanup } = await withTopics(kafka, [
    { topic: state, numPartitions: 2, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] },
  ]));
});
afterAll(async () => {
  for (const created of stores) await created.close();
  await cleanup();
});

/** `rerun start --if-idle`'s refusal, decided on what `starter` read (the input topics have one partition). */
const ifIdle = (starter: RerunJobStore, inputTopic: string) => async (): Promise<void> => {
  const active = starter
    .jobs()
    .find((job) => job.inputTopic === inputTopic && !isEnded(job, starter.progress(job.id), 1));
  if (active)
    throw new RerunError(
      'RERUN_SCOPE_BUSY',
      `rerun ${active.id} of input topic ${inputTopic} has not ended`,
      {
        details: { inputTopic, activeJobId: active.id },
      },
    );
};

/** The ids of the input topic's jobs, once each of `written` can be read (read_committed: a moment after its commit). */
async function jobsOf(inputTopic: string, written: string[]): Promise<string[]> {
  const reader = store();
  await eventually(
    async () => {
      await reader.load();
      return written.every((id) => reader.job(id) !== undefined);
    },
    30_000,
    `the jobs ${written.join(', ')}`,
  );
  return reader
    .jobs()
    .filter((job) => job.inputTopic === inputTopic)
    .map((job) => job.id)
    .sort();
}

describe('regression: the schedule and a `rerun start --if-idle` at the same moment could both write a job', () => {
  // Before, the schedule read the state topic, found the topic idle and wrote its job outside
  // the fence that `rerun start` takes: the start beside it also found the topic idle, and the
  // full storage was looked up twice.
  it('of each race of a slot and an --if-idle start of the same input topic, one job is written', async () => {
    const replica = store();
    const operator = store();
    const slot0 = Date.parse('2025-03-10T02:00:00Z');
    const outcomes: string[] = [];
    for (let race = 0; race < RACES; race += 1) {
      const inputTopic = uniqueName('partners');
      const slot = slot0 + race * DAY;
      const started = testJob(uniqueName('manual'), inputTopic);
      const [decided, start] = await Promise.allSettled([
        scheduleSlot(replica, slot, { inputTopic, schedule: 'every 24h' }, 1),
        operator.createJob(started, ifIdle(operator, inputTopic)),
      ]);
      if (decided.status === 'rejected') throw decided.reason;
      if (start.status === 'rejected' && !(start.reason instanceof RerunError)) throw start.reason;
      const written = [
        ...(decided.value.kind === 'created' ? [scheduledJobId(slot, inputTopic)] : []),
        ...(start.status === 'fulfilled' ? [started.id] : []),
      ];
      const jobs = await jobsOf(inputTopic, written);
      outcomes.push(
        `jobs ${jobs.length}, written ${written.length}, ` +
          `the other refused naming it: ${
            decided.value.kind === 'skipped'
              ? decided.value.activeJobId === started.id
              : start.status === 'rejected' &&
                (start.reason as RerunError).details.activeJobId === scheduledJobId(slot, inputTopic)
          }`,
      );
    }
    expect(outcomes).toEqual(Array(RACES).fill('jobs 1, written 1, the other refused naming it: true'));
  });
});

describe('replicas of `run` deciding the same slot at the same moment', () => {
  it('write one job: one logs it created, the others find it, none logs an error', async () => {
    const slot0 = Date.parse('2025-04-10T00:00:00Z');
    const outcomes: string[] = [];
    for (let race = 0; race < RACES; race += 1) {
      const inputTopic = uniqueName('partners');
      const slot = slot0 + race * DAY;
      // Started just after the slot with catchUp, each replica decides it at once; the next
      // slot's timer is never called back.
      const clock = { now: () => slot + 1_000, setTimer: () => () => {} };
      const replicas = [0, 1].map(() => {
        const { logger, lines } = capturedLogger('debug');
        const schedule = startRerunSchedule({
          spec: { everyMs: DAY },
          catchUp: true,
          store: store(),
          job: { inputTopic },
          partitionCount: () => Promise.resolve(1),
          logger,
          clock,
        });
        return { schedule, lines };
      });
      await Promise.all(replicas.map(({ schedule }) => schedule.stop()));
      const logged = replicas
        .flatMap(({ lines }) => lines())
        .filter((line) => line.msg !== 'rerun schedule started')
        .map((line) => `${line.level >= 50 ? 'error ' : ''}${line.msg}`)
        .sort();
      const jobs = await jobsOf(inputTopic, [scheduledJobId(slot, inputTopic)]);
      outcomes.push(`jobs ${jobs.length}: ${logged.join(', ')}`);
    }
    expect(outcomes).toEqual(
      Array(RACES).fill('jobs 1: scheduled rerun already created, scheduled rerun created'),
    );
  });
});

describe('regression: pipelines of two input topics sharing the state topic, scheduled at the same slot, got one job between them', () => {
  // Before, a slot's job id was the slot alone: the second pipeline found the first's job under
  // it and skipped its slot as made ('scheduled rerun already created'), at every slot; deciding
  // at the same moment (fenced apart, one transactional id per input topic), the later write
  // replaced the earlier's job.
  it('each input topic gets its own job, decided one after the other or at the same moment', async () => {
    const outcomes: string[] = [];
    for (const together of [false, true]) {
      const slot = Date.parse(together ? '2025-05-11T02:00:00Z' : '2025-05-10T02:00:00Z');
      const inputTopics = [uniqueName('partners-a'), uniqueName('partners-b')];
      const decide = (inputTopic: string) =>
        scheduleSlot(store(), slot, { inputTopic, schedule: 'every 24h' }, 1);
      const decided = together
        ? await Promise.all(inputTopics.map(decide))
        : [await decide(inputTopics[0] as string), await decide(inputTopics[1] as string)];
      const jobs = await Promise.all(
        inputTopics.map((inputTopic) => jobsOf(inputTopic, [scheduledJobId(slot, inputTopic)])),
      );
      outcomes.push(
        `${together ? 'together' : 'in turn'}: ${decided.map((outcome) => outcome.kind).join(', ')}; ` +
          `jobs ${jobs.map((ids) => ids.length).join(', ')}`,
      );
    }
    expect(outcomes).toEqual([
      'in turn: created, created; jobs 1, 1',
      'together: created, created; jobs 1, 1',
    ]);
  });
});
