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
    // The pipeline's own topics are made by `topics create`, compacted where they must be; a
    // broker that creates topics on demand would make one deleted meanwhile anew, without that.
    allowAutoTopicCreation: false,
    ...config,
  });
}

/**
 * `from`: read only these partitions, each from the offset given (the whole topic without it).
 */
export async function readTopicToEnd(
  kafka: Kafka,
  topic: string,
  onMessage: (message: KafkaMessage, partition: number) => void | Promise<void>,
  from?: ReadonlyMap<number, bigint>,
): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<number, bigint>();
  try {
    for (const p of await topicOffsets(admin, topic)) {
      const start = from === undefined ? BigInt(p.low) : from.get(p.partition);
      if (start === undefined) continue;
      if (BigInt(p.high) > BigInt(p.low) && BigInt(p.high) > start) ends.set(p.partition, BigInt(p.high));
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
      const started = consumer.run({
        autoCommit: false,
        eachBatch: async ({ batch, resolveOffset }) => {
          const end = ends.get(batch.partition);
          if (end === undefined) return;
          const start = from?.get(batch.partition) ?? 0n;
          for (const message of batch.messages) {
            if (BigInt(message.offset) >= end) break;
            if (BigInt(message.offset) < start) continue;
            await onMessage(message, batch.partition);
            count += 1;
            resolveOffset(message.offset);
          }
          reached(batch.partition, batch.lastOffset());
        },
      });
      started.then(() => {
        // Seek takes effect only once the consumer runs; a fetch from the beginning that
        // came first is skipped up to the start above.
        for (const [partition, offset] of from ?? [])
          if (ends.has(partition)) consumer.seek({ topic, partition, offset: String(offset) });
      }, reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return count;
}
