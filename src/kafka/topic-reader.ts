// Reads a (compacted) topic from the beginning up to the end offsets it had when the
// read began: how the storage index and the bulk ledger are rebuilt at start.
import { randomUUID } from 'node:crypto';
import type { Consumer, ConsumerConfig, Kafka, KafkaMessage } from 'kafkajs';
import { topicOffsets } from './topic-offsets.ts';

/**
 * A consumer in a throw-away group (never a member of the pipeline's group) that reads one of
 * the pipeline's own topics from its start. kafkajs's disconnect waits for the fetch under
 * way, which the broker holds for up to maxWaitTimeInMs when nothing new comes (5 s by
 * default): a read that reached its end, or a stopping process with its followers, sat out
 * those seconds for each such consumer (SIGTERM to exit: about 7 s with nothing in flight).
 */
export function replayConsumer(
  kafka: Kafka,
  purpose: string,
  config: Partial<ConsumerConfig> = {},
): Consumer {
  return kafka.consumer({
    groupId: `partner-enrich-${purpose}-${randomUUID()}`,
    maxWaitTimeInMs: 500,
    ...config,
  });
}

export async function readTopicToEnd(
  kafka: Kafka,
  topic: string,
  onMessage: (message: KafkaMessage, partition: number) => void | Promise<void>,
): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<number, bigint>();
  try {
    for (const p of await topicOffsets(admin, topic)) {
      if (BigInt(p.high) > BigInt(p.low)) ends.set(p.partition, BigInt(p.high));
    }
  } finally {
    await admin.disconnect();
  }
  if (ends.size === 0) return 0;
  const consumer = replayConsumer(kafka, 'replay');
  let count = 0;
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const remaining = new Set(ends.keys());
      const reached = (partition: number, lastOffset: string) => {
        if (BigInt(lastOffset) + 1n >= (ends.get(partition) ?? 0n)) remaining.delete(partition);
        if (remaining.size === 0) resolve();
      };
      // A topic written in transactions can end with a fetch of markers alone, which never
      // reaches eachBatch: it counts as read.
      consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
        if (payload.batchSize === 0 && ends.has(payload.partition))
          reached(payload.partition, payload.lastOffset);
      });
      consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch, resolveOffset }) => {
            const end = ends.get(batch.partition);
            if (end === undefined) return;
            for (const message of batch.messages) {
              if (BigInt(message.offset) >= end) break;
              await onMessage(message, batch.partition);
              count += 1;
              resolveOffset(message.offset);
            }
            reached(batch.partition, batch.lastOffset());
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return count;
}
