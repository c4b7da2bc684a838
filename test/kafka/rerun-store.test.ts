// The rerun store's own bookkeeping of what it read, against a stand-in for the state topic's
// readers: the order in which load() and the follower meet a record is what matters here, and a
// real broker cannot be made to deliver in one order every time (the Kafka store's reading and
// following on the real broker: rerun-store.integration.test.ts).
import type { KafkaMessage } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { KafkaRerunJobStore } from '../../src/kafka/rerun-store.ts';
import { TopicReaders } from '../../src/kafka/topic-reader.ts';
import { testJob } from '../support/rerun-records.ts';

/** A one-partition state topic held in memory; `deliver()` hands the follower what it has not had. */
function stateTopicStandIn(topic: string) {
  const log: KafkaMessage[] = [];
  let eachMessage: ((payload: { message: KafkaMessage; partition: number }) => Promise<void>) | undefined;
  let delivered = 0;
  const consumer = {
    connect: async () => {},
    subscribe: async () => {},
    run: async (options: { eachMessage: typeof eachMessage }) => void (eachMessage = options.eachMessage),
    disconnect: async () => {},
  };
  const readers = {
    kafka: {
      producer: () => ({}),
      admin: () => ({ connect: async () => {}, disconnect: async () => {}, listTopics: async () => [topic] }),
    },
    readToEnd: async (_topic: string, each: (message: KafkaMessage, partition: number) => void) => {
      for (const message of log) each(message, 0);
      return log.length;
    },
    consumer: () => consumer,
    onStopped: () => {},
    firstFetch: async () => {},
    // The real one: it holds no state of the readers.
    followerHandler: TopicReaders.prototype.followerHandler,
    stop: async () => {},
  } as unknown as TopicReaders;
  return {
    readers,
    append: (key: string, value: unknown) =>
      void log.push({
        offset: String(log.length),
        key: Buffer.from(key),
        value: Buffer.from(JSON.stringify(value)),
        headers: {},
        timestamp: '0',
        attributes: 0,
      } as KafkaMessage),
    deliver: async () => {
      for (; delivered < log.length; delivered += 1)
        await eachMessage?.({ message: log[delivered] as KafkaMessage, partition: 0 });
    },
  };
}

describe('KafkaRerunJobStore, following', () => {
  it('regression: a record load() read before the follower got to it (a write of this process reads the topic first) was applied but never told: a resume so read left the paused share waiting', async () => {
    const topic = stateTopicStandIn('state');
    const paused = testJob('J', 'partners', { control: 'pause' });
    topic.append('rerun/J', paused);
    const store = new KafkaRerunJobStore(topic.readers, 'state');
    await store.load();
    const changed: string[] = [];
    await store.follow(
      (jobId) => changed.push(jobId),
      () => {},
    );
    await topic.deliver();
    expect(changed).toEqual([]);
    // `rerun resume J` elsewhere; this process reads the topic to its end for a write of its own.
    topic.append('rerun/J', { ...paused, control: 'run', controlAt: paused.controlAt + 1 });
    await store.load();
    await topic.deliver();
    expect(store.job('J')?.control).toBe('run');
    expect(changed).toEqual(['J']);
  });
});
