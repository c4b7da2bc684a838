// The bulk ledger shares the internal state topic with rerun jobs: on the real broker, the
// ledger reads its entries and nothing of the reruns; what follow() delivers is what other
// replicas write (a replica indexes its own writes as it makes them).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/bulk/bulk-ledger.ts';
import { KafkaLedgerStore } from '../../src/kafka/ledger-store.ts';
import { KafkaRerunJobStore } from '../../src/kafka/rerun-store.ts';
import { eventually, kafkaClient, uniqueName, withTopics } from '../support/kafka.ts';
import { simulatedProgress, testJob } from '../support/rerun-records.ts';

describe('KafkaLedgerStore beside rerun records', () => {
  const kafka = kafkaClient();
  const topic = uniqueName('state');
  let cleanup: () => Promise<void>;
  const ledger = new KafkaLedgerStore(kafka, topic);
  /** Another replica's store on the same topic. */
  const replica = new KafkaLedgerStore(kafka, topic);
  const reruns = new KafkaRerunJobStore(kafka, topic);
  const entry: LedgerEntry = {
    key: 'sub-1/0',
    submissionId: 'sub-1',
    bulkId: 'bulk-1',
    createdAt: 1,
    tasks: [],
  };

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
    const own = new KafkaLedgerStore(kafka, topic);
    await own.connect();
    const recorded: string[] = [];
    const removed: string[] = [];
    const stop = await own.follow({
      recorded: (e) => recorded.push(e.key as string),
      removed: (key) => removed.push(key),
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
});
