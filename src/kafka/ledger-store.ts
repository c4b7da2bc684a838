// The bulk ledger in the internal state topic (compacted, key = bulk id and input
// partition, JSON value, tombstone once every record of the entry is committed). Rerun jobs
// and their progress share the topic under `rerun/` keys: they are not ledger entries.
import { randomUUID } from 'node:crypto';
import type { Consumer, Producer, RecordMetadata } from 'kafkajs';
import type { LedgerEntry, LedgerStore } from '../bulk/bulk-ledger.ts';
import { isRerunTopic } from '../pipeline/rerun-work.ts';
import { isRerunKey } from '../rerun/rerun-job.ts';
import { KafkaError } from './errors.ts';
import type { TopicReaders } from './topic-reader.ts';
import { ledgerEntryOf } from './state-record.ts';
import { isTopicLost, TopicWatch } from './topic-watch.ts';
import { topicOffsets } from './topic-offsets.ts';

const WRITER_HEADER = 'pe.ledger-writer';

/** A ledger entry's key is `<submission>/<topic>:<partition>`; a rerun's topic is `rerun/<job>`. */
const isRerunEntryKey = (key: string): boolean => isRerunTopic(key.slice(key.indexOf('/') + 1));

export class KafkaLedgerStore implements LedgerStore {
  readonly #readers: TopicReaders;
  readonly #topic: string;
  /**
   * Live work's entries and reruns' go through producers of their own: with one request in
   * flight, a live bulk's intent (two writes before it is paid for) waited behind a rerun's
   * writes of whole 500-task bulks, and every live record beside a rerun with it.
   */
  readonly #producers: { live: Producer; rerun: Producer };
  /** Next offset the follower will read, per state topic partition. */
  readonly #followed = new Map<number, bigint>();
  /**
   * Names this store's own writes in a header: the follower passes over them, since the
   * ledger indexed each of them when it was written (parsing and indexing every submission
   * again, three writes of a whole bulk's tasks each, was a tenth of the pipeline's CPU).
   */
  readonly #writer = randomUUID();
  /**
   * Each key's last write still under way: a key's next write is sent once it has ended, so
   * that the state topic gets a submission's writes in the order they were made. Separate
   * send() calls of one producer are not kept in order by kafkajs: a request that fails (a
   * dropped connection, a leader moving) gives its sequence numbers back and is sent again
   * after a backoff, and a send() made meanwhile goes first. A lease renewal whose request was
   * lost so landed after the bulk's record (or after the paid intent of a bulk cut to the
   * quota granted, or the withdrawal): the state topic's last word on the records was an
   * intent, and a restart adopted it and paid for the records again.
   */
  readonly #writing = new Map<string, Promise<void>>();
  readonly #watch: TopicWatch;

  constructor(readers: TopicReaders, topic: string) {
    const { kafka } = readers;
    this.#readers = readers;
    this.#topic = topic;
    this.#watch = new TopicWatch(kafka);
    // A broker that creates topics on demand would make a deleted state topic anew, not
    // compacted, at the first write: the ledger would go on, and be lost to retention.
    const producer = () =>
      kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    this.#producers = { live: producer(), rerun: producer() };
  }

  async connect(): Promise<void> {
    await Promise.all([this.#producers.live.connect(), this.#producers.rerun.connect()]);
  }

  async load(): Promise<LedgerEntry[]> {
    const entries = new Map<string, LedgerEntry>();
    await this.#readers.readToEnd(this.#topic, (message, partition) => {
      const key = message.key?.toString('utf8');
      if (!key || isRerunKey(key)) return;
      if (message.value === null) entries.delete(key);
      else entries.set(key, ledgerEntryOf({ topic: this.#topic, partition }, message, message.value, key));
    });
    return [...entries.values()];
  }

  async follow(changes: {
    recorded(entry: LedgerEntry): void;
    removed(bulkId: string): void;
    failed(error: Error): void;
  }): Promise<() => Promise<void>> {
    // Its own throw-away group: every replica reads the whole (compacted) topic, from the start,
    // so nothing recorded between load() and joining is missed; re-indexing is idempotent.
    const consumer = this.#readers.consumer('ledger');
    this.#readers.onStopped(consumer, this.#topic, changes.failed);
    const fetched = this.#readers.firstFetch(consumer, this.#topic);
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: this.#topic, fromBeginning: true });
      await this.#run(consumer, changes);
      await fetched;
    } catch (error) {
      await consumer.disconnect().catch(() => {});
      throw error;
    }
    return () => this.#readers.stop(consumer);
  }

  async #run(
    consumer: Consumer,
    changes: { recorded(entry: LedgerEntry): void; removed(key: string): void; failed(error: Error): void },
  ): Promise<void> {
    // A transaction's markers (a `rerun start` writes its job in one) are offsets no message
    // is handed for: a partition ending with one counted as unread, and caughtUp() waited
    // for good. A batch's last offset includes them.
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      const next = BigInt(payload.lastOffset) + 1n;
      if (next > (this.#followed.get(payload.partition) ?? -1n)) this.#followed.set(payload.partition, next);
    });
    await consumer.run({
      autoCommit: false,
      eachMessage: this.#readers.followerHandler((message, partition) => {
        const key = message.key?.toString('utf8');
        if (key && !isRerunKey(key) && message.headers?.[WRITER_HEADER]?.toString() !== this.#writer) {
          if (message.value === null) changes.removed(key);
          else
            changes.recorded(ledgerEntryOf({ topic: this.#topic, partition }, message, message.value, key));
        }
        this.#followed.set(partition, BigInt(message.offset) + 1n);
      }, changes.failed),
    });
  }

  /**
   * Waits until the follower has read up to the topic's end offsets as they are now, so a
   * member that takes over a partition knows every bulk its former owner recorded.
   */
  async caughtUp(timeoutMs = 60_000): Promise<void> {
    try {
      await this.#catchUp(timeoutMs);
    } catch (error) {
      throw new KafkaError(
        'LEDGER_CATCH_UP_FAILED',
        `state topic ${this.#topic} not read to its end: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }

  async #catchUp(timeoutMs: number): Promise<void> {
    const admin = this.#readers.kafka.admin();
    await admin.connect();
    let ends: { partition: number; high: bigint; low: bigint }[];
    try {
      ends = (await topicOffsets(admin, this.#topic)).map((p) => ({
        partition: p.partition,
        high: BigInt(p.high),
        low: BigInt(p.low),
      }));
    } finally {
      await admin.disconnect();
    }
    const deadline = Date.now() + timeoutMs;
    const behind = () =>
      ends.filter((e) => e.high > e.low && (this.#followed.get(e.partition) ?? -1n) < e.high);
    while (behind().length > 0) {
      if (Date.now() > deadline)
        throw new Error(`state topic ${this.#topic}: follower still behind after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async save(entries: LedgerEntry[]): Promise<void> {
    const keys = entries.map((entry) => entry.key ?? (entry.bulkId as string));
    await this.#inOrder(keys, () =>
      this.#producerOf(keys).send({
        topic: this.#topic,
        acks: -1,
        messages: entries.map((entry) => ({
          key: entry.key ?? entry.bulkId,
          value: JSON.stringify(entry),
          headers: { [WRITER_HEADER]: this.#writer },
        })),
      }),
    );
  }

  async remove(keys: string[]): Promise<void> {
    await this.#inOrder(keys, () =>
      this.#producerOf(keys).send({
        topic: this.#topic,
        acks: -1,
        messages: keys.map((key) => ({ key, value: null, headers: { [WRITER_HEADER]: this.#writer } })),
      }),
    );
  }

  /** A submission's entries are all live work's or all a rerun's (their bulks never mix). */
  #producerOf(keys: string[]): Producer {
    return keys.some(isRerunEntryKey) ? this.#producers.rerun : this.#producers.live;
  }

  /** Sends once every earlier write of the same keys has ended (succeeded or failed for good). */
  async #inOrder(keys: string[], send: () => Promise<RecordMetadata[]>): Promise<void> {
    const before = new Set<Promise<void>>();
    for (const key of keys) {
      const writing = this.#writing.get(key);
      if (writing) before.add(writing);
    }
    const write =
      before.size > 0 ? Promise.allSettled(before).then(() => this.#write(send)) : this.#write(send);
    for (const key of keys) this.#writing.set(key, write);
    try {
      await write;
    } finally {
      for (const key of keys) if (this.#writing.get(key) === write) this.#writing.delete(key);
    }
  }

  async #write(send: () => Promise<RecordMetadata[]>): Promise<void> {
    try {
      await this.#watch.guard([this.#topic], send());
    } catch (error) {
      if (isTopicLost(error)) throw error;
      throw new KafkaError('STATE_WRITE_FAILED', `state topic ${this.#topic}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.#producers.live.disconnect(), this.#producers.rerun.disconnect()]);
  }
}
