// Integration helpers for whole-pipeline tests: a sandbox, the configuration that points
// the pipeline at it and at the test broker, topics with random names, and readers of
// what the pipeline wrote.
import { SchemaType, type SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { IHeaders, Kafka, KafkaMessage } from 'kafkajs';
import { inject } from 'vitest';
import { loadConfig, type Config, type ConfigInput } from '../../src/config/index.ts';
import { createPipelineTopics, pipelineTopicNames } from '../../src/kafka/topics.ts';
import { TopicReaders } from '../../src/kafka/topic-reader.ts';
import { generateDataset } from '../../src/sandbox/dataset/dataset.ts';
import { upstreamPartners } from '../../src/sandbox/upstream-partners.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { pipelineSchema } from '../../src/serde/schemas.ts';
import { uniqueName } from './kafka.ts';

export function testTopics(prefix: string): Config['topics'] {
  const base = uniqueName(prefix);
  return {
    input: `${base}.in`,
    matches: `${base}.matches`,
    events: `${base}.events`,
    storage: `${base}.storage`,
    deadLetters: `${base}.dlq`,
    state: `${base}.state`,
    partitions: 3,
    replicationFactor: 1,
  };
}

/** The pipeline's configuration for a test: the test broker and registry, the given sandbox, quick batches. */
export function testConfig(
  sandboxUrl: string,
  topics: Config['topics'],
  overrides: ConfigInput = {},
): Config {
  return loadConfig({
    env: {},
    overrides: {
      ...overrides,
      kafka: { brokers: [inject('kafkaBrokers')], groupId: uniqueName('enrich'), ...overrides.kafka },
      schemaRegistry: { url: inject('schemaRegistryUrl') },
      topics,
      refdata: { baseUrl: sandboxUrl, apiKey: 'sandbox-api-key', ...overrides.refdata },
      batching: { maxTasks: 500, lingerMs: 50, ...overrides.batching },
      polling: { initialDelayMs: 20, maxDelayMs: 500, ...overrides.polling },
      retry: { maxAttempts: 5, initialDelayMs: 50, maxDelayMs: 1_000, ...overrides.retry },
      quota: { initialBackoffMs: 100, maxBackoffMs: 1_000, ...overrides.quota },
      observability: { logLevel: 'silent' },
    },
  });
}

export async function createTopicsFor(kafka: Kafka, topics: Config['topics']): Promise<() => Promise<void>> {
  const admin = kafka.admin();
  await admin.connect();
  await createPipelineTopics(admin, topics, topics);
  await admin.disconnect();
  return () => dropTopics(kafka, topics);
}

export { pipelineTopicNames };

export async function dropTopics(kafka: Kafka, topics: Config['topics']): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: pipelineTopicNames(topics) }).catch(() => {});
  await admin.disconnect();
}

/** Registers PartnerRecord under the input topic's subject and returns the Avro encoder of upstream producers. */
export async function partnerEncoder(
  registry: SchemaRegistry,
  topic: string,
): Promise<(partner: PartnerRecord) => Promise<Buffer>> {
  const { id } = await registry.register(
    { type: SchemaType.AVRO, schema: pipelineSchema('PartnerRecord').text },
    { subject: `${topic}-value` },
  );
  return (partner) => registry.encode(id, partner);
}

/** Produces `partners` to `topic` as the upstream producers do: Avro PartnerRecords keyed by partner id. */
export async function producePartners(
  kafka: Kafka,
  registry: SchemaRegistry,
  topic: string,
  partners: PartnerRecord[],
): Promise<void> {
  const encode = await partnerEncoder(registry, topic);
  await produce(
    kafka,
    topic,
    await Promise.all(partners.map(async (p) => ({ key: p.partnerId, value: await encode(p) }))),
  );
}

export async function produce(
  kafka: Kafka,
  topic: string,
  messages: { key: string | Buffer | null; value: Buffer | null; headers?: IHeaders; partition?: number }[],
): Promise<void> {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (let i = 0; i < messages.length; i += 1000) {
    await producer.send({ topic, acks: -1, messages: messages.slice(i, i + 1000) });
  }
  await producer.disconnect();
}

export async function readAll(kafka: Kafka, topic: string): Promise<KafkaMessage[]> {
  const messages: KafkaMessage[] = [];
  await new TopicReaders(kafka).readToEnd(topic, (message) => void messages.push(message));
  return messages;
}

/** Committed offsets of the group equal the input topic's end offsets: nothing left unprocessed. */
export async function committedAndEndOffsets(
  kafka: Kafka,
  groupId: string,
  topic: string,
): Promise<{ committed: Record<number, string>; end: Record<number, string> }> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [ends, committed] = await Promise.all([
      admin.fetchTopicOffsets(topic),
      admin.fetchOffsets({ groupId, topics: [topic] }),
    ]);
    return {
      end: Object.fromEntries(ends.map((p) => [p.partition, p.high])),
      committed: Object.fromEntries(committed[0]?.partitions.map((p) => [p.partition, p.offset]) ?? []),
    };
  } finally {
    await admin.disconnect();
  }
}

/** The group's committed offsets of `topic` are its end offsets. */
export async function committedAtEnd(kafka: Kafka, groupId: string, topic: string): Promise<boolean> {
  const { committed, end } = await committedAndEndOffsets(kafka, groupId, topic);
  return JSON.stringify(committed) === JSON.stringify(end);
}

/** Resolves when `finished()` reaches `total`, polling; fails with what was reached on time-out. */
export async function waitForFinished(
  finished: () => number,
  total: number,
  timeoutMs = 180_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (finished() < total) {
    if (Date.now() > deadline) throw new Error(`only ${finished()} of ${total} records finished in time`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * `count` distinct upstream partners of the sandbox's dataset (`organizations`, `seed`: a
 * sandbox started with the same finds them) as PartnerRecord JSON input messages
 * (`inputFormat: json`), keyed by partner id.
 */
export function jsonPartnerMessages(
  count: number,
  seed: number,
  organizations = 1_000,
): { key: string; value: Buffer }[] {
  return upstreamPartners(generateDataset({ organizations, seed }), {
    count,
    seed,
    invalid: 0,
    resent: 0,
    updated: 0,
  }).map(({ partner }) => ({ key: String(partner?.partnerId), value: Buffer.from(JSON.stringify(partner)) }));
}
