// The reconciliation's own reader: a throw-away consumer group reads a topic from the start to
// the end offsets it had when the read began. Deliberately not the pipeline's reader.
import { randomUUID } from 'node:crypto';
import type { Kafka, KafkaMessage } from 'kafkajs';

export type ReadMessage = KafkaMessage & { partition: number };

export async function readWholeTopic(
  kafka: Kafka,
  topic: string,
  timeoutMs = 120_000,
): Promise<ReadMessage[]> {
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
  const messages: ReadMessage[] = [];
  if (ends.size === 0) return messages;
  const consumer = kafka.consumer({
    groupId: `chaos-reconcile-${randomUUID()}`,
    maxBytesPerPartition: 16 << 20,
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const remaining = new Set(ends.keys());
    const done = Promise.withResolvers<undefined>();
    const timer = setTimeout(
      () =>
        done.reject(
          new Error(
            `${topic}: partitions ${[...remaining].join(', ')} not read to the end in ${timeoutMs} ms`,
          ),
        ),
      timeoutMs,
    );
    const reached = (partition: number, lastOffset: string) => {
      if (BigInt(lastOffset) + 1n >= (ends.get(partition) ?? 0n)) remaining.delete(partition);
      if (remaining.size === 0) done.resolve(undefined);
    };
    // Read committed (kafkajs's default), a transactional topic ends with a commit marker no
    // batch delivers, and a fetch of markers alone never reaches eachBatch.
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      if (payload.batchSize === 0 && ends.has(payload.partition))
        reached(payload.partition, payload.lastOffset);
    });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const end = ends.get(batch.partition);
        if (end === undefined) return;
        for (const message of batch.messages) {
          if (BigInt(message.offset) >= end) break;
          messages.push({ ...message, partition: batch.partition });
        }
        reached(batch.partition, batch.lastOffset());
      },
    });
    await done.promise.finally(() => clearTimeout(timer));
  } finally {
    await consumer.disconnect();
  }
  return messages;
}
