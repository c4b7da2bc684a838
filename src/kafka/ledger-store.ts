// The bulk ledger in the internal state topic (compacted, key = bulk id, JSON value,
// tombstone once every record of the bulk is committed).
import { randomUUID } from 'node:crypto';
import type { Kafka, Producer } from 'kafkajs';
import type { LedgerEntry, LedgerStore } from '../bulk/bulk-ledger.ts';
import { readTopicToEnd } from './topic-reader.ts';

export class KafkaLedgerStore implements LedgerStore {
  readonly #kafka: Kafka;
  readonly #topic: string;
  readonly #producer: Producer;

  constructor(kafka: Kafka, topic: string) {
    this.#kafka = kafka;
    this.#topic = topic;
    this.#producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  }

  async connect(): Promise<void> {
    await this.#producer.connect();
  }

  async load(): Promise<LedgerEntry[]> {
    const entries = new Map<string, LedgerEntry>();
    await readTopicToEnd(this.#kafka, this.#topic, (message) => {
      const key = message.key?.toString('utf8');
      if (!key) return;
      if (message.value === null) entries.delete(key);
      else entries.set(key, JSON.parse(message.value.toString('utf8')) as LedgerEntry);
    });
    return [...entries.values()];
  }

  async follow(changes: {
    recorded(entry: LedgerEntry): void;
    removed(bulkId: string): void;
  }): Promise<() => Promise<void>> {
    // Its own throw-away group: every replica reads the whole (compacted) topic, from the start,
    // so nothing recorded between load() and joining is missed; re-indexing is idempotent.
    const consumer = this.#kafka.consumer({ groupId: `partner-enrich-ledger-${randomUUID()}` });
    await consumer.connect();
    await consumer.subscribe({ topic: this.#topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ message }) => {
        const key = message.key?.toString('utf8');
        if (!key) return;
        if (message.value === null) changes.removed(key);
        else changes.recorded(JSON.parse(message.value.toString('utf8')) as LedgerEntry);
      },
    });
    return () => consumer.disconnect();
  }

  async save(entry: LedgerEntry): Promise<void> {
    await this.#producer.send({
      topic: this.#topic,
      acks: -1,
      messages: [{ key: entry.bulkId, value: JSON.stringify(entry) }],
    });
  }

  async remove(bulkId: string): Promise<void> {
    await this.#producer.send({ topic: this.#topic, acks: -1, messages: [{ key: bulkId, value: null }] });
  }

  async close(): Promise<void> {
    await this.#producer.disconnect();
  }
}
