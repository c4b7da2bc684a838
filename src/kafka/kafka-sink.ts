// Output topics as a sink. Messages from many pieces of work are gathered for a few
// milliseconds and sent in batches (idempotent producer, acks from all in-sync
// replicas); each send resolves once Kafka acknowledged all of its messages.
//
// The broker refuses a record batch larger than the topic's max.message.bytes, and such
// a refusal is fatal: the restart would build the same batch again. So each request
// carries at most that many bytes per topic (read at connect, and again every
// WATCH_EVERY_MS = 15 s while connected), requests go one after another so that the
// idempotent producer keeps each key's order across them, and a message that could never
// fit is rejected alone, before anything is sent. A limit raised while running counts
// within about 15 s (a dead letter OUTPUT_TOO_LARGE replayed after that is written); one
// lowered counts as soon: later batches are cut to it and a message over it is rejected
// alone. Only a batch the broker refuses before the next read saw the lowered limit (or
// built of messages checked before it) is fatal; the restart reads the limits again.
// An output topic deleted while running fails the sink for good (TOPIC_MISSING, topic-watch.ts),
// and so does one deleted and made anew, at its first write (TOPIC_RECREATED).
import type { Kafka, Message, Producer, RecordMetadata } from 'kafkajs';
import type { OutputMessage, OutputName } from '../pipeline/outputs.ts';
import type { OutputSink } from '../pipeline/ports.ts';
import { withTraceHeaders } from '../observability/tracing.ts';
import type { TopicEncoder } from './avro-encoder.ts';
import { notAuthorized, onTopics, refusedAsTooLarge, SinkError } from './errors.ts';
import { compressedLimit, compressionType, type OutputCompression } from './output-compression.ts';
import { batchOfOneSize, RECORD_BATCH_OVERHEAD, recordSize } from './record-size.ts';
import { topicLimits } from './topic-limits.ts';
import { isTopicLost, TopicWatch, WATCH_EVERY_MS } from './topic-watch.ts';

export interface KafkaSinkOptions {
  topics: Record<OutputName, string>;
  /** Encoders of the Avro outputs; dead letters keep their original bytes. */
  encoders: Record<Exclude<OutputName, 'deadLetters'>, TopicEncoder>;
  lingerMs?: number;
  /** Codec of the record batches (`kafka.compression`); none by default. */
  compression?: OutputCompression;
  /** Most messages in one request. */
  maxBatchMessages?: number;
  /** Record batch limit for every output topic instead of their max.message.bytes; for tests. */
  maxMessageBytes?: number;
  /** How often the topics' max.message.bytes is read again while connected; for tests. */
  limitsEveryMs?: number;
}

/** An output as it goes on the wire, its size checked against its topic's limit. */
export interface Encoded {
  topic: string;
  message: Message;
  bytes: number;
}

interface Pending {
  messages: Encoded[];
  /** Messages before this index are in a request already. */
  next: number;
  acked: number;
  settled: boolean;
  resolve: () => void;
  reject: (error: Error) => void;
}

type Chunk = { pending: Pending; encoded: Encoded }[];

export class KafkaSink implements OutputSink {
  readonly #kafka: Kafka;
  readonly #producer: Producer;
  readonly #options: KafkaSinkOptions;
  /** Record batch limit (max.message.bytes) per output topic, as last read. */
  #limits = new Map<string, number>();
  #smallestLimit: number | undefined;
  /** The next read of the limits, armed while connected. */
  #limitsTimer: NodeJS.Timeout | undefined;
  /** A read of the limits under way: close() waits for it, so that no admin client is left behind. */
  #limitsRead: Promise<void> | undefined;
  #closed = false;
  #pending: Pending[] = [];
  #unsent = 0;
  #timer: NodeJS.Timeout | undefined;
  #sending: Promise<void> | undefined;
  readonly #watch: TopicWatch;
  /**
   * An output topic was deleted: every write fails with it from then on. The request to it is
   * left to kafkajs's retries, and the producer's requests go one at a time behind it.
   */
  #failure: Error | undefined;

  constructor(kafka: Kafka, options: KafkaSinkOptions) {
    this.#kafka = kafka;
    this.#options = options;
    this.#watch = new TopicWatch(kafka);
    this.#producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
    });
  }

  async connect(): Promise<void> {
    const topics = [...new Set(Object.values(this.#options.topics))];
    const { maxMessageBytes } = this.#options;
    this.#setLimits(
      maxMessageBytes === undefined
        ? await topicLimits(this.#kafka, topics)
        : new Map(topics.map((topic) => [topic, maxMessageBytes])),
    );
    await this.#producer.connect();
    if (maxMessageBytes === undefined) this.#readLimitsLater(topics);
  }

  #setLimits(limits: Map<string, number>): void {
    const compression = this.#options.compression ?? 'none';
    this.#limits = new Map([...limits].map(([topic, limit]) => [topic, compressedLimit(limit, compression)]));
    this.#smallestLimit = Math.min(...limits.values());
  }

  /**
   * Reads the limits again in `limitsEveryMs`, and so on until closed: an admin connection and
   * one describeConfigs request a period (about 6 ms against a local broker), like the topic
   * watch's look beside a pipeline's hundreds of requests a second. The answer replaces the
   * limits at once, between two messages' checks; meanwhile the old ones serve, so no check
   * and no write waits for it. A read that fails keeps the old limits until the next one: no
   * broker answering (its request retried once; connecting retries as the client does, about
   * 8 s), or a topic deleted (topic-watch.ts reports that).
   */
  #readLimitsLater(topics: string[]): void {
    this.#limitsTimer = setTimeout(() => {
      this.#limitsRead = topicLimits(this.#kafka, topics, { retries: 1, initialRetryTime: 100 })
        .then(
          (limits) => this.#setLimits(limits),
          () => {},
        )
        .finally(() => {
          this.#limitsRead = undefined;
          if (!this.#closed) this.#readLimitsLater(topics);
        });
    }, this.#options.limitsEveryMs ?? WATCH_EVERY_MS).unref();
  }

  send(messages: OutputMessage[]): Promise<void> {
    if (messages.length === 0) return Promise.resolve();
    if (this.#failure) return Promise.reject(this.#failure);
    let encoded: Encoded[];
    try {
      encoded = messages.map((m) => this.encode(m));
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return new Promise((resolve, reject) => {
      this.#pending.push({ messages: encoded, next: 0, acked: 0, settled: false, resolve, reject });
      this.#unsent += encoded.length;
      if (this.#unsent >= this.#maxBatchMessages) this.#flush();
      // While a request is in flight, the next one takes whatever came meanwhile.
      else if (!this.#sending) this.#timer ??= setTimeout(() => this.#flush(), this.#options.lingerMs ?? 5);
    });
  }

  get #maxBatchMessages(): number {
    return this.#options.maxBatchMessages ?? 2000;
  }

  /** Encodes one output; throws OUTPUT_TOO_LARGE for one its topic can never take. */
  encode(message: OutputMessage): Encoded {
    const topic = this.#options.topics[message.output];
    const key =
      message.key === null ? null : Buffer.isBuffer(message.key) ? message.key : Buffer.from(message.key);
    let value: Buffer | null;
    if (message.value === null) value = null;
    else if (Buffer.isBuffer(message.value)) value = message.value;
    else if (message.output === 'deadLetters') value = Buffer.from(JSON.stringify(message.value));
    else value = this.#options.encoders[message.output].encode(message.value);
    // Called within the produce span of the outputs' work: its traceparent goes with them.
    const headers = withTraceHeaders(message.headers);
    const encoded = {
      key,
      value,
      ...(headers ? { headers } : {}),
      ...(message.partition === undefined ? {} : { partition: message.partition }),
    };
    const bytes = recordSize(encoded);
    const limit = this.limit(topic);
    const alone = batchOfOneSize(bytes);
    if (alone > limit) {
      throw new SinkError(
        'OUTPUT_TOO_LARGE',
        `${message.output} message of ${alone} bytes is over the ${limit} bytes topic ${topic} accepts`,
        { details: { output: message.output, topic, bytes: alone, limit } },
      );
    }
    return { topic, message: encoded, bytes };
  }

  /** Encodes the messages as send() would, and sends nothing. */
  check(messages: OutputMessage[]): void {
    for (const message of messages) this.encode(message);
  }

  smallestLimit(): number {
    if (this.#smallestLimit === undefined) throw new Error('KafkaSink.smallestLimit() before connect()');
    return this.#smallestLimit;
  }

  /**
   * The topic's record batch limit (max.message.bytes) as last read, less the codec's margin
   * (compressedLimit); known once connected.
   */
  limit(topic: string): number {
    const limit = this.#limits.get(topic);
    if (limit === undefined) throw new Error('KafkaSink.send() before connect()');
    return limit;
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#sending ??= this.#drain().finally(() => {
      this.#sending = undefined;
      // A caller woken by the last acknowledgement may have sent again before this ran.
      if (this.#pending.length > 0) this.#flush();
    });
  }

  /** Sends requests one after another until nothing is pending. */
  async #drain(): Promise<void> {
    while (this.#pending.length > 0) {
      const chunk = this.#nextChunk();
      if (chunk.length === 0) continue;
      const byTopic = new Map<string, Message[]>();
      for (const { encoded } of chunk) {
        const list = byTopic.get(encoded.topic) ?? [];
        list.push(encoded.message);
        byTopic.set(encoded.topic, list);
      }
      try {
        const written = await this.#watch.guard(
          [...byTopic.keys()],
          this.#producer.sendBatch({
            acks: -1,
            compression: compressionType(this.#options.compression ?? 'none'),
            topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
          }),
        );
        unknownPartitionsCheck(chunk, written);
      } catch (error) {
        if (isTopicLost(error)) {
          this.#failure = error;
          for (const pending of [...chunk.map((c) => c.pending), ...this.#pending]) settle(pending, error);
          this.#pending = [];
          this.#unsent = 0;
          return;
        }
        // The rest of a failed caller's messages is not sent: it is told to write them again.
        // A refusal as too large is not retried here: kafkajs has taken back the sequence
        // numbers of the whole request, also of partitions whose batches the broker appended,
        // and a request built again under the new limits could be taken for those (dropped as
        // a duplicate) or refused as out of order. The restart reads the limits and finds
        // what was written (the storage record).
        // The broker's answer names no topic when it refuses Write: the request's are named.
        const failure =
          refusedAsTooLarge(
            error,
            chunk.map(({ encoded }) => encoded.topic),
            (topic) => this.limit(topic),
          ) ??
          notAuthorized(error, onTopics('Write', [...byTopic.keys()])) ??
          (error as Error);
        for (const { pending } of chunk) settle(pending, failure);
        continue;
      }
      for (const { pending } of chunk) {
        pending.acked += 1;
        if (pending.acked === pending.messages.length) settle(pending);
      }
    }
  }

  /**
   * The next request, in call order: at most the topic's limit in bytes per topic, which
   * bounds every topic-partition's record batch too. A caller's messages stay in one request
   * unless they fill one alone: a record's MatchResult and its storage record (which says its
   * outputs were written) are then durable together, and a kill between two requests cannot
   * leave the MatchResult without it (the record, read again, would be written twice).
   */
  #nextChunk(): Chunk {
    const chunk: Chunk = [];
    const bytes = new Map<string, number>();
    for (let pending = this.#pending[0]; pending; pending = this.#pending[0]) {
      if (!pending.settled) {
        const callerStart = { length: chunk.length, next: pending.next };
        for (; pending.next < pending.messages.length; pending.next += 1) {
          const encoded = pending.messages[pending.next] as Encoded;
          const used = (bytes.get(encoded.topic) ?? 0) + encoded.bytes;
          const full =
            chunk.length >= this.#maxBatchMessages ||
            RECORD_BATCH_OVERHEAD + used > this.limit(encoded.topic);
          if (full && callerStart.length > 0) {
            this.#unsent += chunk.length - callerStart.length;
            chunk.length = callerStart.length;
            pending.next = callerStart.next;
            return chunk;
          }
          // A message fits alone (checked by encode), so every request takes at least one.
          if (full && chunk.length > 0) return chunk;
          bytes.set(encoded.topic, used);
          chunk.push({ pending, encoded });
          this.#unsent -= 1;
        }
      } else {
        this.#unsent -= pending.messages.length - pending.next;
      }
      this.#pending.shift();
    }
    return chunk;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#limitsTimer);
    await this.#limitsRead;
    this.#flush();
    while (this.#sending) await this.#sending;
    await this.#producer.disconnect();
  }
}

function settle(pending: Pending, error?: Error): void {
  if (pending.settled) return;
  pending.settled = true;
  if (error) pending.reject(error);
  else pending.resolve();
}

/**
 * kafkajs leaves a message addressed to a partition its metadata does not know out of the
 * request and reports the send as a success (its metadata is refreshed every 5 minutes: the
 * storage topic's partitions added while running are unknown until then). Each partition
 * written is in the broker's answer: one missing from it was not written, and its callers
 * must not be told otherwise.
 */
function unknownPartitionsCheck(chunk: Chunk, written: RecordMetadata[]): void {
  const answered = new Set(written.map((w) => `${w.topicName}:${w.partition}`));
  const missing = new Set<string>();
  for (const { encoded } of chunk) {
    const { partition } = encoded.message;
    if (partition !== undefined && !answered.has(`${encoded.topic}:${partition}`))
      missing.add(`${encoded.topic}:${partition}`);
  }
  if (missing.size === 0) return;
  throw new SinkError(
    'OUTPUT_PARTITION_UNKNOWN',
    `output records for ${[...missing].join(', ')} were not written: the Kafka client does not know ` +
      'these partitions yet (partitions added while running)',
    { details: { missing: [...missing] } },
  );
}
