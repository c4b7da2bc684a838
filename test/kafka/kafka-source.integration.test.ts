// The Kafka source on the real broker: how long its close may wait for kafkajs's consumer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaSource, LEAVE_GROUP_MS } from '../../src/kafka/kafka-source.ts';
import type { SourceHandler } from '../../src/pipeline/ports.ts';
import { eventually, fetchLosingClient, kafkaClient, uniqueName, withTopics } from '../support/kafka.ts';

describe('KafkaSource on the real broker', () => {
  const topic = uniqueName('input');
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ cleanup } = await withTopics(kafkaClient(), [{ topic, numPartitions: 1 }]));
  });
  afterAll(async () => cleanup());

  it("regression: its close waited out kafkajs's retry backoff (a SIGTERM during a broker failover took 4 s there, a follower the whole exit bound); now the member is left behind after LEAVE_GROUP_MS", async () => {
    // kafkajs's disconnect waits for the fetch loop, which waits its backoff (20 s here).
    const fetches = fetchLosingClient(20_000);
    const source = new KafkaSource(fetches.kafka, {
      topic,
      groupId: uniqueName('group'),
      sessionTimeoutMs: 30_000,
    });
    const assigned = Promise.withResolvers<undefined>();
    const handler: SourceHandler = {
      offer: () => true,
      assigned: () => assigned.resolve(undefined),
      revoked: () => {},
      rebalancing: () => {},
      failed: () => {},
    };
    await source.start(handler);
    await assigned.promise;
    fetches.brokerAway();
    await eventually(() => fetches.lost >= 1, 30_000, 'a fetch lost');

    const started = performance.now();
    await source.stop();
    await source.close();
    // kafkajs's own stop took the backoff's 16-24 s.
    expect(performance.now() - started).toBeLessThan(LEAVE_GROUP_MS + 3_000);
  });
});
