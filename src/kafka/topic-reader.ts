// Reads a (compacted) topic from the beginning up to the end offsets it had when the
// read began: how the storage index and the bulk ledger are rebuilt at start.
import { randomUUID } from 'node:crypto';
import type { Kafka, KafkaMessage } from 'kafkajs';

export async function readTopicToEnd(
  kafka: Kafka,
  topic: string,
  onMessage: (message: KafkaMessage, partition: number) => void | Promise<void>,
): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<number, bigint>();
  try {
    for (const p of await admin.fetchTopicOffsets(topic)) {
      if (BigInt(p.high) > BigInt(p.low)) ends.set(p.partition, BigInt(p.high));
    }
  } finally {
    await admin.disconnect();
  }
  if (ends.size === 0) return 0;
  // A throw-away group: the read is a replay, never a member of the pipeline's group.
  const consumer = kafka.consumer({ groupId: `partner-enrich-replay-${randomUUID()}` });
  let count = 0;
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const remaining = new Set(ends.keys());
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
            if (BigInt(batch.lastOffset()) + 1n >= end) remaining.delete(batch.partition);
            if (remaining.size === 0) resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return count;
}
