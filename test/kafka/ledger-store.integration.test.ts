// The bulk ledger shares the internal state topic with rerun jobs: on the real broker, the
// ledger reads its entries and nothing of the reruns; what follow() delivers is what other
// replicas write (a replica indexes its own writes as it makes them).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BulkLedger, type LedgerEntry } from '../../src/bulk/bulk-ledger.ts';
import { KafkaLedgerStore } from '../../src/kafka/ledger-store.ts';
import { KafkaRerunJobStore } from '../../src/kafka/rerun-store.ts';
import { topicOffsets } from '../../src/kafka/topic-offsets.ts';
import { FOLLOWER_STOP_MS, TopicReaders } from '../../src/kafka/topic-reader.ts';
import {
  eventually,
  fetchLosingClient,
  kafkaClient,
  lossyKafkaClient,
  uniqueName,
  withTopics,
} from '../support/kafka.ts';
import { simulatedProgress, testJob } from '../support/rerun-records.ts';

describe('KafkaLedgerStore beside rerun records', () => {
  const kafka = kafkaClient();
  const topic = uniqueName('state');
  let cleanup: () => Promise<void>;
  const ledger = new KafkaLedgerStore(new TopicReaders(kafka), topic);
  /** Another replica's store on the same topic. */
  const replica = new KafkaLedgerStore(new TopicReaders(kafka), topic);
  const reruns = new KafkaRerunJobStore(new TopicReaders(kafka), topic);
  const entry: LedgerEntry = {
    key: 'sub-1/0',
    submissionId: 'sub-1',
    bulkId: 'bulk-1',
    createdAt: 1,
    tasks: [],
  };

  /** The sum of the state topic's end offsets. */
  async function endOffsets(): Promise<bigint> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      return (await topicOffsets(admin, topic)).reduce((sum, p) => sum + BigInt(p.high), 0n);
    } finally {
      await admin.disconnect();
    }
  }

  beforeAll(async () => {
    ({ cleanup } = await withTopics(kafka, [
      { topic, numPartitions: 2, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] },
    ]));
    await ledger.connect();
    await replica.connect();
  });
  afterAll(async () => {
    await ledger.close();
    await replica.close();
    await reruns.close();
    await cleanup();
  });

  it('regression: load() and follow() leave rerun jobs and progress out of the ledger entries', async () => {
    await reruns.saveJob(testJob('nightly', 'partners'));
    await reruns.saveProgress(simulatedProgress('nightly', 0));
    await replica.save([entry]);

    expect((await ledger.load()).map((e) => e.key)).toEqual(['sub-1/0']);

    const recorded: string[] = [];
    const removed: string[] = [];
    const stop = await ledger.follow({
      recorded: (e) => recorded.push(e.key as string),
      removed: (key) => removed.push(key),
      failed: () => {},
    });
    try {
      await reruns.saveJob(testJob('nightly', 'partners', { control: 'cancel' }));
      await replica.save([{ ...entry, key: 'sub-2/1', submissionId: 'sub-2' }]);
      await ledger.caughtUp();
      await eventually(() => recorded.includes('sub-2/1'), 30_000, 'the second entry');
      expect(recorded.sort()).toEqual(['sub-1/0', 'sub-2/1']);
      expect(removed).toEqual([]);
    } finally {
      await stop();
    }
  });

  it('follow() passes over what its own store writes and delivers what another replica writes', async () => {
    // A store of its own: its follower's positions start at nothing, so caughtUp() below
    // waits until it has read past every write made here.
    const own = new KafkaLedgerStore(new TopicReaders(kafka), topic);
    await own.connect();
    const recorded: string[] = [];
    const removed: string[] = [];
    const stop = await own.follow({
      recorded: (e) => recorded.push(e.key as string),
      removed: (key) => removed.push(key),
      failed: () => {},
    });
    try {
      await own.save([{ ...entry, key: 'own/0', submissionId: 'own' }]);
      await own.remove(['own/0']);
      await replica.save([{ ...entry, key: 'theirs/0', submissionId: 'theirs' }]);
      await replica.remove(['theirs/0']);
      await own.caughtUp();
      expect(recorded).toContain('theirs/0');
      expect(removed).toContain('theirs/0');
      expect(recorded).not.toContain('own/0');
      expect(removed).not.toContain('own/0');
    } finally {
      await stop();
      await own.close();
    }
  });

  it("regression: caughtUp() waited for good on a partition whose last record is a rerun start's commit marker", async () => {
    // `rerun start` writes its job in a transaction: the partition's end offset is then one
    // past the commit marker, which no consumer is handed as a message. A member taking over
    // an input partition failed with LEDGER_CATCH_UP_FAILED until someone wrote there again.
    const own = new KafkaLedgerStore(new TopicReaders(kafka), topic);
    await own.connect();
    const stop = await own.follow({ recorded: () => {}, removed: () => {}, failed: () => {} });
    try {
      const before = await endOffsets();
      await reruns.createJob(testJob('started-in-a-transaction', 'partners'), async () => {});
      // The markers are written a moment after commit() returns: then the end counts them.
      await eventually(async () => (await endOffsets()) === before + 2n, 30_000, 'the commit marker');
      await expect(own.caughtUp(15_000)).resolves.toBeUndefined();
    } finally {
      await stop();
      await own.close();
    }
  });

  it("regression: a lease renewal whose request was lost and sent again does not land after the bulk's record (a restart found the records under an intent again and paid for them twice)", async () => {
    // The connection drops each request carrying an intent while `dropping` is set, as a
    // broker connection lost with the request on it: kafkajs sends the request again after a
    // backoff. Nothing else is touched.
    let dropping = false;
    let dropped = 0;
    const faulty = lossyKafkaClient({
      retry: { retries: 8, initialRetryTime: 100 },
      lost: (request) => {
        if (!dropping || !request.includes('"leaseUntil"')) return false;
        dropped += 1;
        return true;
      },
    });
    const store = new KafkaLedgerStore(new TopicReaders(faulty), topic);
    await store.connect();
    try {
      const ledger = new BulkLedger(store);
      const position = { topic: 'partners', partition: 3, offset: 17 };
      const tasks = [{ taskId: 't-1', hash: 'h-1', positions: [position] }];
      const intent = { leaseMs: 60_000, paid: true, owner: 'member-1' };
      await ledger.intend('renewed', tasks, intent);
      // The renewal timer fires; its request is lost, and the bulk's record is written meanwhile.
      dropping = true;
      const renewal = ledger.intend('renewed', tasks, intent);
      await eventually(() => dropped > 0, 30_000, 'the renewal lost');
      let written = false;
      const recorded = ledger.record('renewed', 'bulk-renewed', tasks).then(() => (written = true));
      // The record lands, or (kept in order) waits while the renewal is lost twice more.
      await eventually(() => written || dropped >= 3, 30_000, 'the record written or the renewal lost again');
      dropping = false;
      await Promise.all([renewal, recorded]);

      // The process is killed now; its restart reads the state topic.
      const restarted = new BulkLedger(new KafkaLedgerStore(new TopicReaders(kafka), topic));
      await restarted.load();
      expect(restarted.find(position)).toMatchObject({ submissionId: 'renewed', bulkId: 'bulk-renewed' });
    } finally {
      await store.close();
    }
  });

  it("regression: a follower's stop waited out kafkajs's retry backoff (a SIGTERM during a broker failover spent the whole exit bound there and exited 1); now it returns within FOLLOWER_STOP_MS", async () => {
    // kafkajs's disconnect waits for the fetch loop, which waits its backoff (10 s here).
    const fetches = fetchLosingClient(10_000);
    const readers = new TopicReaders(fetches.kafka);
    const ledgerFollowed = await new KafkaLedgerStore(readers, topic).follow({
      recorded: () => {},
      removed: () => {},
      failed: () => {},
    });
    const rerunsFollowed = await new KafkaRerunJobStore(readers, topic).follow(
      () => {},
      () => {},
    );
    fetches.brokerAway();
    await eventually(() => fetches.lost >= 2, 30_000, 'both followers failing to fetch');

    for (const stop of [ledgerFollowed, rerunsFollowed]) {
      const started = performance.now();
      await stop();
      // kafkajs's own stop took the backoff's 8-12 s.
      expect(performance.now() - started).toBeLessThan(FOLLOWER_STOP_MS + 3_000);
    }
  });
});

describe('a state topic record partner-enrich did not write', () => {
  const kafka = kafkaClient();
  const topic = uniqueName('state');
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ cleanup } = await withTopics(kafka, [
      { topic, numPartitions: 2, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] },
    ]));
    // Something else writes to the topic: after a ledger entry of partner-enrich's, a value
    // that is not JSON under a ledger key, and a JSON value that is no rerun record under a
    // rerun key.
    const producer = kafka.producer();
    await producer.connect();
    try {
      const entry = { submissionId: 'sub-1', bulkId: 'bulk-1', createdAt: 1, tasks: [] };
      await producer.send({
        topic,
        messages: [
          { partition: 0, key: 'sub-1/partners:0', value: JSON.stringify(entry) },
          { partition: 0, key: 'sub-2/partners:0', value: 'written by hand' },
          { partition: 1, key: 'rerun/nightly', value: '"paused"' },
        ],
      });
    } finally {
      await producer.disconnect();
    }
  });
  afterAll(async () => cleanup());

  const unreadable = (partition: number, offset: string, key: string) =>
    expect.objectContaining({ code: 'STATE_RECORD_UNREADABLE', details: { topic, partition, offset, key } });

  it("regression: a value that is not JSON failed the ledger's start with the Kafka client's wrapping of a SyntaxError (no code, no record named); now STATE_RECORD_UNREADABLE names it", async () => {
    await expect(new KafkaLedgerStore(new TopicReaders(kafka), topic).load()).rejects.toEqual(
      unreadable(0, '1', 'sub-2/partners:0'),
    );
  });

  it("regression: the ledger's follower stopped at such a record with the same uncoded error; now it stops with STATE_RECORD_UNREADABLE", async () => {
    const failures: Error[] = [];
    const stop = await new KafkaLedgerStore(new TopicReaders(kafka), topic).follow({
      recorded: () => {},
      removed: () => {},
      failed: (error) => failures.push(error),
    });
    try {
      await eventually(() => failures.length > 0, 30_000, 'the follower failed');
      expect(failures).toEqual([unreadable(0, '1', 'sub-2/partners:0')]);
    } finally {
      await stop();
    }
  });

  it("regression: a JSON value that is no rerun record failed the reruns' start and follower with a TypeError (no code); now both name the record", async () => {
    const store = new KafkaRerunJobStore(new TopicReaders(kafka), topic);
    await expect(store.load()).rejects.toEqual(unreadable(1, '0', 'rerun/nightly'));
    const failures: Error[] = [];
    const stop = await new KafkaRerunJobStore(new TopicReaders(kafka), topic).follow(
      () => {},
      (error) => failures.push(error),
    );
    try {
      await eventually(() => failures.length > 0, 30_000, 'the follower failed');
      expect(failures).toEqual([unreadable(1, '0', 'rerun/nightly')]);
    } finally {
      await stop();
    }
  });
});
