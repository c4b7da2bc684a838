// Output topics as a sink. Messages from many pieces of work are gathered for a few
// milliseconds and sent in one batch per flush (idempotent producer, acks from all
// in-sync replicas); each send resolves once Kafka acknowledged its messages.
import type { Kafka, Message, Producer } from 'kafkajs';
import type { OutputMessage, OutputName } from '../pipeline/outputs.ts';
import type { OutputSink } from '../pipeline/ports.ts';
import type { TopicEncoder } from './avro-encoder.ts';

export interface KafkaSinkOptions {
  topics: Record<OutputName, string>;
  /** Encoders of the Avro outputs; dead letters keep their original bytes. */
  encoders: Record<Exclude<OutputName, 'deadLetters'>, TopicEncoder>;
  lingerMs?: number;
  maxBatchMessages?: number;
}

interface Pending {
  messages: OutputMessage[];
  resolve: () => void;
  reject: (error: Error) => void;
}

export class KafkaSink implements OutputSink {
  readonly #producer: Producer;
  readonly #options: KafkaSinkOptions;
  #pending: Pending[] = [];
  #pendingCount = 0;
  #timer: NodeJS.Timeout | undefined;
  #inFlight = new Set<Promise<void>>();

  constructor(kafka: Kafka, options: KafkaSinkOptions) {
    this.#options = options;
    this.#producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
    });
  }

  async connect(): Promise<void> {
    await this.#producer.connect();
  }

  send(messages: OutputMessage[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ messages, resolve, reject });
      this.#pendingCount += messages.length;
      if (this.#pendingCount >= (this.#options.maxBatchMessages ?? 2000)) this.#flush();
      else this.#timer ??= setTimeout(() => this.#flush(), this.#options.lingerMs ?? 5);
    });
  }

  #encode(message: OutputMessage): Message {
    const key =
      message.key === null ? null : Buffer.isBuffer(message.key) ? message.key : Buffer.from(message.key);
    let value: Buffer | null;
    if (message.value === null) value = null;
    else if (Buffer.isBuffer(message.value)) value = message.value;
    else if (message.output === 'deadLetters') value = Buffer.from(JSON.stringify(message.value));
    else value = this.#options.encoders[message.output].encode(message.value);
    return { key, value, ...(message.headers ? { headers: message.headers } : {}) };
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#pending;
    this.#pending = [];
    this.#pendingCount = 0;
    if (batch.length === 0) return;
    const byTopic = new Map<string, Message[]>();
    let encoded: boolean;
    try {
      for (const { messages } of batch) {
        for (const message of messages) {
          const topic = this.#options.topics[message.output];
          const list = byTopic.get(topic) ?? [];
          list.push(this.#encode(message));
          byTopic.set(topic, list);
        }
      }
      encoded = true;
    } catch (error) {
      for (const p of batch) p.reject(error as Error);
      encoded = false;
    }
    if (!encoded) return;
    const sent = this.#producer
      .sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) })
      .then(
        () => batch.forEach((p) => p.resolve()),
        (error: Error) => batch.forEach((p) => p.reject(error)),
      );
    this.#inFlight.add(sent);
    void sent.finally(() => this.#inFlight.delete(sent));
  }

  async close(): Promise<void> {
    this.#flush();
    await Promise.all(this.#inFlight);
    await this.#producer.disconnect();
  }
}
