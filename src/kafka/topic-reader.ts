// The pipeline's readers of its own topics, in throw-away groups: a (compacted) topic read from
// its beginning up to the end offsets it had when the read began is how the storage index and the
// bulk ledger are rebuilt at start; followers read on from there.
import { randomUUID } from 'node:crypto';
import type { Consumer, ConsumerConfig, Kafka, KafkaMessage } from 'kafkajs';
import { finishedWithin } from '../finished-within.ts';
import { notAuthorized, onTopics } from './errors.ts';
import { topicOffsets } from './topic-offsets.ts';

/** `kafka.readerGroupPrefix`'s default. */
export const DEFAULT_READER_GROUP_PREFIX = 'partner-enrich-';

/**
 * How long a follower's stop may take: a few times what it takes while the brokers answer
 * (0.2-0.3 s). kafkajs's stop waits for its fetch loop, which sits out its retry's backoff
 * (seconds, growing) while the group's coordinator moves: a SIGTERM during a broker failover
 * spent the whole exit bound in one follower's stop (20 s, "did not stop in time", exit 1).
 */
export const FOLLOWER_STOP_MS = 2_000;

/**
 * Readers of the pipeline's own topics (state, storage, dead letters), each a consumer in a
 * throw-away group `<groupPrefix><purpose>-<uuid>`, never a member of the pipeline's group. On
 * a cluster with ACLs the principal needs Read on groups of the prefix; a prefix of its own
 * (`kafka.readerGroupPrefix`) lets each deployment be granted only its own.
 */
export class TopicReaders {
  readonly kafka: Kafka;
  readonly groupPrefix: string;

  constructor(kafka: Kafka, groupPrefix = DEFAULT_READER_GROUP_PREFIX) {
    this.kafka = kafka;
    this.groupPrefix = groupPrefix;
  }

  /**
   * A consumer that reads one of the pipeline's own topics from its start. kafkajs's
   * disconnect waits for the fetch under way, which the broker holds for up to
   * maxWaitTimeInMs when nothing new comes (5 s by default): a read that reached its end, or a
   * stopping process with its followers, sat out those seconds for each such consumer
   * (SIGTERM to exit: about 7 s with nothing in flight).
   */
  consumer(purpose: string, config: Partial<ConsumerConfig> = {}): Consumer {
    return this.kafka.consumer({
      groupId: `${this.groupPrefix}${purpose}-${randomUUID()}`,
      maxWaitTimeInMs: 500,
      // The pipeline's own topics are made by `topics create`, compacted where they must be; a
      // broker that creates topics on demand would make one deleted meanwhile anew, without that.
      allowAutoTopicCreation: false,
      ...config,
    });
  }

  /**
   * Stops a reader that follows a topic, within FOLLOWER_STOP_MS. One still stopping then is
   * left to finish: its group is throw-away and it commits nothing, so nothing waits for it to
   * leave (the coordinator drops the member after its session timeout).
   */
  async stop(consumer: Consumer): Promise<void> {
    await finishedWithin(consumer.disconnect(), FOLLOWER_STOP_MS);
  }

  /** KAFKA_NOT_AUTHORIZED for a read of `topic` in a throw-away group the broker refused; `error` otherwise. */
  refused(topic: string, error: Error): Error {
    return (
      notAuthorized(error, {
        ...onTopics('Read', topic),
        group: { operation: 'Read', resource: `Group prefix ${this.groupPrefix}` },
      }) ?? error
    );
  }

  /**
   * Calls `failed` once a reader of `topic` stopped for good: kafkajs restarts a crashed consumer
   * only after errors it retries, and left alone a refused read (no ACL for the topic or the
   * group) waited for ever. A refusal names the ACL to grant.
   */
  onStopped(consumer: Consumer, topic: string, failed: (error: Error) => void): void {
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart) failed(this.refused(topic, payload.error));
    });
  }

  /**
   * A follower's eachMessage that stops at the first record `handle` throws on, and says so
   * once through `failed`; it reads nothing further. Thrown to kafkajs, the error went to the
   * consumer's retries: the ledger's follower failed with kafkajs's own error naming no
   * record, the reruns' passed over the record on its retry.
   */
  followerHandler(
    handle: (message: KafkaMessage, partition: number) => void,
    failed: (error: Error) => void,
  ): (payload: { message: KafkaMessage; partition: number }) => Promise<void> {
    let stopped = false;
    return async ({ message, partition }) => {
      if (stopped) return;
      try {
        handle(message, partition);
      } catch (error) {
        stopped = true;
        failed(error as Error);
      }
    };
  }

  /**
   * Resolves once the reader's first fetch is answered; rejects when it stopped for good before
   * (its topic or group refused), so that a follower that cannot read fails the start that made
   * it instead of the pipeline a moment after.
   */
  firstFetch(consumer: Consumer, topic: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const off = consumer.on(consumer.events.FETCH, () => {
        off();
        resolve();
      });
      this.onStopped(consumer, topic, reject);
    });
  }

  /**
   * Reads `topic` up to the end offsets it had when the read began. `from`: read only these
   * partitions, each from the offset given (the whole topic without it).
   */
  readToEnd(
    topic: string,
    onMessage: (message: KafkaMessage, partition: number) => void | Promise<void>,
    from?: ReadonlyMap<number, bigint>,
  ): Promise<number> {
    return readTopicToEnd(this, topic, onMessage, from);
  }
}

async function readTopicToEnd(
  readers: TopicReaders,
  topic: string,
  onMessage: (message: KafkaMessage, partition: number) => void | Promise<void>,
  from?: ReadonlyMap<number, bigint>,
): Promise<number> {
  const admin = readers.kafka.admin();
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
  const consumer = readers.consumer('replay');
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
      readers.onStopped(consumer, topic, reject);
      let failed = false;
      const started = consumer.run({
        autoCommit: false,
        eachBatch: async ({ batch, resolveOffset }) => {
          const end = ends.get(batch.partition);
          if (end === undefined || failed) return;
          const start = from?.get(batch.partition) ?? 0n;
          for (const message of batch.messages) {
            if (BigInt(message.offset) >= end) break;
            if (BigInt(message.offset) < start) continue;
            try {
              await onMessage(message, batch.partition);
            } catch (error) {
              // Thrown to kafkajs, the batch would be handed again for ever: the read fails.
              failed = true;
              reject(error as Error);
              return;
            }
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
