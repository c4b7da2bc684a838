// The Kafka source on the real broker: how long its close may wait for kafkajs's consumer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaSource, LEAVE_GROUP_MS } from '../../src/kafka/kafka-source.ts';
import type { SourceHandler } from '../../src/pipeline/ports.ts';
import {
  eventually,
  FETCH_API_KEY,
  kafkaClient,
  lossyKafkaClient,
  uniqueName,
  withTopics,
} from '../support/kafka.ts';

describe('KafkaSource on the real broker', () => {
  const topic = uniqueName('input');
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ cleanup } = await withTopics(kafkaClient(), [{ topic, numPartitions: 1 }]));
  });
  afterAll(async () => cleanup());

  it("regression: its close waited out kafkajs's retry backoff (a SIGTERM during a broker failover took 4 s there, a follower the whole exit bound); now the member is left behind after LEAVE_GROUP_MS", async () => {
    // Fetches fail while `failing` is set, as they do while a broker is away: the consumer's
    // fetch loop then waits its retry's backoff (here 20 s at the first) before fetching again,
    // and kafkajs's disconnect waits for that loop.
    let failing = false;
    let failed = 0;
    const kafka = lossyKafkaClient({
      retry: { retries: 8, initialRetryTime: 20_000 },
      lost: (request) => {
        if (!failing || request.readInt16BE(4) !== FETCH_API_KEY) return false;
        failed += 1;
        return true;
      },
    });
    const source = new KafkaSource(kafka, { topic, groupId: uniqueName('group'), sessionTimeoutMs: 30_000 });
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
    failing = true;
    await eventually(() => failed >= 1, 30_000, 'a fetch lost');

    const started = performance.now();
    await source.stop();
    await source.close();
    // kafkajs's own stop took the backoff's 16-24 s.
    expect(performance.now() - started).toBeLessThan(LEAVE_GROUP_MS + 3_000);
  });
});
