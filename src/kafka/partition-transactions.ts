// Exactly-once outputs: one transactional producer per input partition this member owns,
// with a transactional id stable across restarts and owners (group, input topic,
// partition). kafkajs has no KIP-447 (its TxnOffsetCommit carries no group generation),
// so the transactional id is the fencing: whoever starts the partition's producer next
// (its new owner after a rebalance, this member after a restart) bumps the producer epoch,
// which aborts the previous owner's open transaction and refuses everything it sends after.
// Each transaction carries a partition's finished outputs and the consumed offset they
// finish, sent with sendOffsets: both become visible together, or neither does.
import type { Kafka, Message, Producer } from 'kafkajs';
import type { Committable } from '../pipeline/commit-watermark.ts';
import type { OutputMessage } from '../pipeline/outputs.ts';
import type { PartitionRef, TransactionalOutputs } from '../pipeline/ports.ts';
import { isFenced, KafkaError, notAuthorized, onTransactionalId, refusedAsTooLarge } from './errors.ts';
import type { Encoded } from './kafka-sink.ts';
import { RECORD_BATCH_OVERHEAD } from './record-size.ts';
import { compressionType, type OutputCompression } from './output-compression.ts';
import { isTopicLost, topicMissing, TopicWatch } from './topic-watch.ts';

export interface PartitionTransactionsOptions {
  groupId: string;
  transactionTimeoutMs: number;
  /** Encodes an output, refusing one its topic can never take (the sink's check). */
  encode(message: OutputMessage): Encoded;
  /** Record batch limit (max.message.bytes) per output topic. */
  limit(topic: string): number;
  /** Codec of the record batches (`kafka.compression`); none by default. */
  compression?: OutputCompression;
  /** Most messages in one produce request. */
  maxBatchMessages?: number;
}

/** Stable per input partition, so that the partition's next producer fences the previous one. */
export const transactionalId = (groupId: string, ref: PartitionRef): string =>
  `${groupId}.${ref.topic}.${ref.partition}`;

const keyOf = (ref: PartitionRef) => `${ref.topic}:${ref.partition}`;

interface Owned {
  producer: Producer;
  /** Transactions of one producer go one after another. */
  busy: Promise<unknown>;
}

export class KafkaPartitionTransactions implements TransactionalOutputs<Encoded> {
  readonly #kafka: Kafka;
  readonly #options: PartitionTransactionsOptions;
  readonly #owned = new Map<string, Owned>();
  readonly #watch: TopicWatch;

  constructor(kafka: Kafka, options: PartitionTransactionsOptions) {
    this.#kafka = kafka;
    this.#options = options;
    this.#watch = new TopicWatch(kafka);
  }

  prepare(messages: OutputMessage[]): Encoded[] {
    return messages.map((message) => this.#options.encode(message));
  }

  /**
   * Starts the partition's producer and fences its previous owner: resolves once any
   * transaction that owner left open has ended (committed or aborted), so that the offset
   * committed for the partition is final from then on.
   */
  async open(ref: PartitionRef): Promise<void> {
    if (this.#owned.has(keyOf(ref))) return;
    const producer = this.#kafka.producer({
      transactionalId: transactionalId(this.#options.groupId, ref),
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: this.#options.transactionTimeoutMs,
      allowAutoTopicCreation: false,
    });
    const opened = (async () => {
      await producer.connect();
      // kafkajs asks for the producer id at the first transaction; an empty one sends
      // nothing else (no EndTxn) and fences now rather than at the first commit.
      const empty = await producer.transaction();
      await empty.abort();
    })();
    this.#owned.set(keyOf(ref), { producer, busy: opened });
    try {
      await opened;
    } catch (error) {
      throw failure(ref, error, transactionalId(this.#options.groupId, ref));
    }
  }

  /**
   * One transaction: `messages`, then `offset` committed for the consumer group, then the
   * commit. Rejects with TRANSACTION_FENCED (nothing of it is visible; the partition is no
   * longer this member's), OUTPUT_REFUSED_AS_TOO_LARGE (a topic's limit was lowered since
   * start) or TRANSACTION_FAILED.
   */
  commit(ref: PartitionRef, messages: Encoded[], offset: Committable): Promise<void> {
    const owned = this.#owned.get(keyOf(ref));
    if (!owned)
      return Promise.reject(
        new KafkaError('TRANSACTION_FENCED', `no producer for ${keyOf(ref)}: the partition is not ours`),
      );
    const run = owned.busy
      .catch(() => {})
      .then(() => this.#transaction(owned.producer, ref, messages, offset));
    owned.busy = run;
    return run;
  }

  /** The partition moved away: its producer is closed once its transaction under way ended. */
  async close(ref: PartitionRef): Promise<void> {
    const owned = this.#owned.get(keyOf(ref));
    if (!owned) return;
    this.#owned.delete(keyOf(ref));
    await owned.busy.catch(() => {});
    await owned.producer.disconnect().catch(() => {});
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.#owned.keys()].map((key) => this.close(this.#refOf(key))));
  }

  #refOf(key: string): PartitionRef {
    const at = key.lastIndexOf(':');
    return { topic: key.slice(0, at), partition: Number(key.slice(at + 1)) };
  }

  async #transaction(
    producer: Producer,
    ref: PartitionRef,
    messages: Encoded[],
    offset: Committable,
  ): Promise<void> {
    let transaction: Awaited<ReturnType<Producer['transaction']>> | undefined;
    try {
      transaction = await producer.transaction();
      for (const chunk of this.#chunks(messages)) {
        await this.#watch.guard(
          [...chunk.keys()],
          transaction.sendBatch({
            acks: -1,
            compression: compressionType(this.#options.compression ?? 'none'),
            topicMessages: [...chunk].map(([topic, list]) => ({ topic, messages: list })),
          }),
        );
      }
      // Right after a commit the coordinator is still writing the previous transaction's
      // markers and answers CONCURRENT_TRANSACTIONS; kafkajs as patched asks again (it did not
      // when only offsets were added: tulios/kafkajs#430), also when the coordinator moved.
      await transaction.sendOffsets({
        consumerGroupId: this.#options.groupId,
        topics: [
          {
            topic: offset.topic,
            partitions: [{ partition: offset.partition, offset: String(offset.offset) }],
          },
        ],
      });
      await transaction.commit();
    } catch (error) {
      // Aborting tells read_committed consumers at once; a fenced producer cannot (its
      // successor's start aborted the transaction already), and one whose topic was deleted
      // still has the send to it under way (the restart's producer aborts the transaction; so
      // too that of a write into a topic made anew).
      if (isTopicLost(error)) throw error;
      if (transaction?.isActive() && !isFenced(error)) await transaction.abort().catch(() => {});
      const topics = [...new Set(messages.map(({ topic }) => topic))];
      const tooLarge = refusedAsTooLarge(error, topics, this.#options.limit);
      if (tooLarge) throw tooLarge;
      // A deleted topic can also fail the transaction at once rather than stall its send: the
      // broker answers AddPartitionsToTxn with "unknown topic" for its partitions and "not
      // attempted" for the others, and kafkajs reports one of them.
      const missing = isFenced(error) ? undefined : await this.#watch.missing(topics);
      throw missing === undefined ? failure(ref, error) : topicMissing(missing);
    }
  }

  /** Requests of at most each topic's limit in bytes (kafkajs builds one batch per topic-partition). */
  *#chunks(messages: Encoded[]): Generator<Map<string, Message[]>> {
    const max = this.#options.maxBatchMessages ?? 2000;
    let chunk = new Map<string, Message[]>();
    let bytes = new Map<string, number>();
    let count = 0;
    for (const { topic, message, bytes: size } of messages) {
      const used = (bytes.get(topic) ?? 0) + size;
      if (count > 0 && (count >= max || RECORD_BATCH_OVERHEAD + used > this.#options.limit(topic))) {
        yield chunk;
        chunk = new Map();
        bytes = new Map();
        count = 0;
      }
      bytes.set(topic, (bytes.get(topic) ?? 0) + size);
      const messages = chunk.get(topic);
      if (messages) messages.push(message);
      else chunk.set(topic, [message]);
      count += 1;
    }
    if (count > 0) yield chunk;
  }
}

/** `id`: the producer's transactional id, named when the broker refuses it. */
function failure(ref: PartitionRef, error: unknown, id?: string): KafkaError {
  // kafkajs says only "Failed to find group coordinator" when the transactional id is refused.
  const refusal = id === undefined ? undefined : notAuthorized(error, onTransactionalId(id));
  const message = (refusal ?? (error as Error)).message;
  return isFenced(error)
    ? new KafkaError(
        'TRANSACTION_FENCED',
        `transactional producer of ${keyOf(ref)} fenced (the partition has a newer owner): ${message}`,
        { cause: error, details: { topic: ref.topic, partition: ref.partition } },
      )
    : new KafkaError('TRANSACTION_FAILED', `transaction of ${keyOf(ref)} failed: ${message}`, {
        cause: error,
        details: { topic: ref.topic, partition: ref.partition },
      });
}
