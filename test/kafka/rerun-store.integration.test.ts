// Rerun jobs and progress in the state topic on the real broker: what one store writes,
// another reads (load) and sees arrive (follow), beside ledger entries it leaves alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaRerunJobStore, KEPT_ENDED_JOBS } from '../../src/kafka/rerun-store.ts';
import { TopicReaders } from '../../src/kafka/topic-reader.ts';
import { eventually, kafkaClient, uniqueName, withTopics } from '../support/kafka.ts';
import { simulatedProgress, testJob } from '../support/rerun-records.ts';

describe('KafkaRerunJobStore', () => {
  const kafka = kafkaClient();
  const topic = uniqueName('state');
  let cleanup: () => Promise<void>;
  const stores: KafkaRerunJobStore[] = [];
  const store = () => {
    const s = new KafkaRerunJobStore(new TopicReaders(kafka), topic);
    stores.push(s);
    return s;
  };

  beforeAll(async () => {
    ({ cleanup } = await withTopics(kafka, [
      { topic, numPartitions: 3, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] },
    ]));
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    await cleanup();
  });

  it('loads every job with its latest job record and progress per partition', async () => {
    const writer = store();
    const t = Date.now();
    await writer.saveJob(testJob('b-job', 'partners', { createdAt: t }));
    await writer.saveJob(testJob('a-job', 'partners', { createdAt: t }));
    await writer.saveJob(testJob('early', 'partners', { createdAt: t - 1 }));
    await writer.saveJob(testJob('b-job', 'partners', { createdAt: t, control: 'pause', controlAt: t + 5 }));
    await writer.saveProgress(simulatedProgress('b-job', 0, { lastPartnerId: 'P-1' }));
    await writer.saveProgress(simulatedProgress('b-job', 0, { lastPartnerId: 'P-9' }));
    await writer.saveProgress(simulatedProgress('b-job', 11, { done: true }));
    // A ledger entry in the same topic is none of the store's business.
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic,
      messages: [{ key: 'sub-1/0', value: JSON.stringify({ createdAt: t, tasks: [] }) }],
    });
    await producer.disconnect();

    const reader = store();
    await reader.load();
    expect(new Set(reader.jobs().map((j) => j.id))).toEqual(new Set(['early', 'a-job', 'b-job']));
    expect(reader.job('b-job')).toMatchObject({ control: 'pause', controlAt: t + 5 });
    expect(reader.job('sub-1/0')).toBeUndefined();
    const progress = reader.progress('b-job');
    expect([...progress.keys()].sort((a, b) => a - b)).toEqual([0, 11]);
    expect(progress.get(0)?.lastPartnerId).toBe('P-9');
    expect(reader.progress('a-job').size).toBe(0);
  });

  it('follows what another store writes after load, naming the job each record concerns', async () => {
    const follower = store();
    await follower.load();
    const seen: string[] = [];
    const stop = await follower.follow(
      (jobId) => seen.push(jobId),
      () => {},
    );
    try {
      const writer = store();
      await writer.saveJob(testJob('followed', 'partners'));
      await writer.saveProgress(
        simulatedProgress('followed', 2, { counts: { ...simulatedProgress('x', 0).counts, read: 7 } }),
      );
      await eventually(() => follower.progress('followed').get(2)?.counts.read === 7, 30_000, 'the progress');
      expect(follower.job('followed')?.inputTopic).toBe('partners');
      // Each record once: what load() read is not delivered again.
      expect(seen.filter((id) => id === 'followed')).toEqual(['followed', 'followed']);
      expect(seen).not.toContain('b-job');
    } finally {
      await stop();
    }
  });

  it('createJob writes the job in a transaction that other stores read, and nothing when admit refuses', async () => {
    const starter = store();
    await store().saveJob(testJob('written-before', 'partners'));
    const seen: string[] = [];
    await expect(
      starter.createJob(testJob('refused', 'partners'), () => Promise.reject(new Error('busy'))),
    ).rejects.toThrow('busy');
    await starter.createJob(testJob('admitted', 'partners'), async () => {
      // admit decides on the topic read inside the start's fence.
      seen.push(...starter.jobs().map((job) => job.id));
    });
    expect(seen).toContain('written-before');

    // Read committed, and read at once: createJob returns once its commit's markers are written.
    const reader = store();
    await reader.load();
    expect(reader.job('admitted')?.inputTopic).toBe('partners');
    expect(reader.job('refused')).toBeUndefined();
  });

  it('regression: a store loaded right after createJob returned could miss the job (read-your-writes)', async () => {
    // createJob resolved once the commit was answered, but the broker writes the commit's
    // markers after that: until they land, the last stable offset that load() reads up to is
    // before the job. A rare moment (before the fix, 0 to 7 of these 600 starts missed, in 3
    // of 4 runs), so many starts, four input topics' at once as replicas and operators may.
    const rounds = 150;
    const startsAtOnce = 4;
    const missed: string[] = [];
    for (let round = 0; round < rounds; round += 1)
      await Promise.all(
        Array.from({ length: startsAtOnce }, async (_, n) => {
          const id = `read-your-writes-${round}-${n}`;
          await store().createJob(testJob(id, `read-your-writes-${n}`), () => Promise.resolve());
          const reader = store();
          await reader.load();
          if (reader.job(id) === undefined) missed.push(id);
        }),
      );
    expect(missed).toEqual([]);
  });

  it('refuses to load from a state topic that does not exist, with a typed error', async () => {
    const missing = new KafkaRerunJobStore(new TopicReaders(kafka), uniqueName('no-state'));
    await expect(missing.load()).rejects.toMatchObject({ code: 'RERUN_STATE_TOPIC_MISSING' });
  });

  it('regression: ended jobs were kept for ever (every run loaded and scanned every job ever created); creating a job removes the ended ones past the newest 50 of its input topic, with their progress', async () => {
    const input = uniqueName('retired-input');
    const { cleanup: dropInput } = await withTopics(kafka, [{ topic: input, numPartitions: 2 }]);
    try {
      const writer = store();
      const t = Date.now() - 1_000_000;
      const ended = (n: number) => `ended-${String(n).padStart(2, '0')}`;
      for (let n = 0; n < KEPT_ENDED_JOBS + 3; n += 1) {
        await writer.saveJob(
          testJob(ended(n), input, { createdAt: t + n, control: 'cancel', controlAt: t + n }),
        );
        await writer.saveProgress(simulatedProgress(ended(n), 0, { done: true }));
      }
      await writer.saveJob(testJob('finished', input, { createdAt: t - 1 }));
      for (const partition of [0, 1])
        await writer.saveProgress(simulatedProgress('finished', partition, { done: true }));
      await writer.saveJob(testJob('running', input, { createdAt: t - 2 }));
      await writer.saveProgress(simulatedProgress('running', 0, { done: true }));
      await writer.saveJob(testJob('other-topic', 'partners', { createdAt: t - 3, control: 'cancel' }));

      expect(await writer.createJob(testJob('new', input), async () => {})).toBe('written');

      const reader = store();
      await reader.load();
      const ofInput = reader
        .jobs()
        .filter((job) => job.inputTopic === input)
        .map((job) => job.id);
      const kept = Array.from({ length: KEPT_ENDED_JOBS }, (_, i) => ended(i + 3));
      expect(new Set(ofInput)).toEqual(new Set([...kept, 'running', 'new']));
      expect(reader.job('other-topic')).toBeDefined();
      for (const gone of [ended(0), ended(1), ended(2), 'finished'])
        expect(reader.progress(gone).size).toBe(0);
      expect(reader.progress(ended(3)).size).toBe(1);
    } finally {
      await dropInput();
    }
  }, 60_000);
});
