// Only a topic the broker's metadata no longer lists is taken for deleted: a topic still there,
// or no broker answering (a restart), leaves the write to the client's own retries.
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../deploy/local/processes.ts';
import { TopicWatch } from '../../src/kafka/topic-watch.ts';
import { eventually, kafkaClient, uniqueName, withTopics } from '../support/kafka.ts';

describe('TopicWatch', () => {
  const kafka = kafkaClient();
  const [kept, deleted] = [uniqueName('kept'), uniqueName('deleted')];
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const made = await withTopics(kafka, [{ topic: kept }, { topic: deleted }]);
    cleanup = made.cleanup;
    await made.admin.deleteTopics({ topics: [deleted] });
  });
  afterAll(() => cleanup());

  it('names a deleted topic, and none while every topic is listed', async () => {
    const watch = new TopicWatch(kafka);
    expect(await watch.missing([kept, deleted])).toBe(deleted);
    expect(await watch.missing([kept])).toBeUndefined();
  });

  it('takes no broker answering for "not confirmed": a broker restart is ridden out', async () => {
    const away = new Kafka({
      brokers: [`127.0.0.1:${await freePort()}`],
      logLevel: logLevel.NOTHING,
      connectionTimeout: 500,
    });
    expect(await new TopicWatch(away).missing([kept])).toBeUndefined();
  });

  it('fails a write to a deleted topic that stalls with TOPIC_MISSING, details.topic, though the write never ends', async () => {
    const never = new Promise<never>(() => {});
    await expect(new TopicWatch(kafka).guard([kept, deleted], never)).rejects.toMatchObject({
      code: 'TOPIC_MISSING',
      details: { topic: deleted },
    });
  });

  it('watches topics while nothing is written: reports a deleted one once, and nothing after stop', async () => {
    const reports: unknown[] = [];
    const watch = new TopicWatch(kafka);
    const stopDeleted = watch.watch([kept, deleted], (error) => reports.push(error), 100);
    await eventually(() => reports.length > 0, 10_000, 'a report of the deleted topic');
    stopDeleted();
    expect(reports).toMatchObject([{ code: 'TOPIC_MISSING', details: { topic: deleted } }]);

    const keptReports: unknown[] = [];
    const stopKept = watch.watch([kept], (error) => keptReports.push(error), 100);
    // Some looks, 100 ms apart, at a topic still listed.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    stopKept();
    expect(keptReports).toEqual([]);
  });

  it("passes a write's own failure on as it is", async () => {
    const failure = new Error('refused');
    await expect(new TopicWatch(kafka).guard([deleted], Promise.reject(failure))).rejects.toBe(failure);
  });
});
