// The input topic as a record source. Offsets are never committed by kafkajs itself:
// the pipeline commits a partition's position only when every record before it is
// finished (see pipeline/commit-watermark.ts). Pausing stops fetching; nothing is buffered.
import type { Consumer, Kafka } from 'kafkajs';
import type { Committable } from '../pipeline/commit-watermark.ts';
import type { RecordSource } from '../pipeline/ports.ts';
import type { InputRecord } from '../pipeline/records.ts';

/** Well inside kafkajs's default 3 s heartbeat interval and any sane session timeout. */
const HEARTBEAT_EVERY_MS = 1000;

export interface KafkaSourceOptions {
  topic: string;
  groupId: string;
  sessionTimeoutMs: number;
  /** Called when a commit fails (e.g. during a rebalance); the records are read again later. */
  onCommitError?: (error: Error) => void;
}

const headerText = (headers: Record<string, Buffer | string | (Buffer | string)[] | undefined> = {}) =>
  Object.fromEntries(
    Object.entries(headers)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, String(Array.isArray(v) ? v[0] : v)]),
  );

export class KafkaSource implements RecordSource {
  readonly #consumer: Consumer;
  readonly #options: KafkaSourceOptions;
  #stopped = false;

  constructor(kafka: Kafka, options: KafkaSourceOptions) {
    this.#options = options;
    this.#consumer = kafka.consumer({
      groupId: options.groupId,
      sessionTimeout: options.sessionTimeoutMs,
      allowAutoTopicCreation: false,
    });
  }

  get consumer(): Consumer {
    return this.#consumer;
  }

  async start(deliver: (record: InputRecord) => Promise<void>): Promise<void> {
    const { topic } = this.#options;
    await this.#consumer.connect();
    await this.#consumer.subscribe({ topic, fromBeginning: true });
    await this.#consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        let lastHeartbeat = Date.now();
        for (const message of batch.messages) {
          if (this.#stopped || !isRunning() || isStale()) break;
          await deliver({
            position: { topic: batch.topic, partition: batch.partition, offset: Number(message.offset) },
            key: message.key,
            value: message.value,
            headers: headerText(message.headers),
            timestamp: Number(message.timestamp),
          });
          // Resolving only moves kafkajs's fetch position; commits are the pipeline's.
          resolveOffset(message.offset);
          // kafkajs heartbeats only when asked; a paused pipeline can hold a batch for long.
          if (Date.now() - lastHeartbeat > HEARTBEAT_EVERY_MS) {
            await heartbeat();
            lastHeartbeat = Date.now();
          }
        }
      },
    });
  }

  pause(): void {
    this.#consumer.pause([{ topic: this.#options.topic }]);
  }

  resume(): void {
    this.#consumer.resume([{ topic: this.#options.topic }]);
  }

  async commit(positions: Committable[]): Promise<void> {
    try {
      await this.#consumer.commitOffsets(
        positions.map((p) => ({ topic: p.topic, partition: p.partition, offset: String(p.offset) })),
      );
    } catch (error) {
      this.#options.onCommitError?.(error as Error);
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.pause();
  }

  async close(): Promise<void> {
    this.#stopped = true;
    await this.#consumer.disconnect();
  }
}
