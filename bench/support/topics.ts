// Topics of a benchmark: random names, created before a run and deleted after it so that
// a 1M-record backlog does not stay on the broker's disk.
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { Config } from '../../src/config/index.ts';
import { createPipelineTopics, createTopicsWithLeaders } from '../../src/kafka/topics.ts';

export const PARTITIONS = 3;

export const uniqueName = (prefix: string): string => `bench-${prefix}-${randomUUID().slice(0, 8)}`;

export interface TopicSpec {
  topic: string;
  numPartitions?: number;
  configEntries?: { name: string; value: string }[];
}

export async function createTopics(kafka: Kafka, topics: TopicSpec[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await createTopicsWithLeaders(
      admin,
      topics.map((t) => ({ numPartitions: PARTITIONS, replicationFactor: 1, ...t })),
    );
  } finally {
    await admin.disconnect();
  }
}

export async function deleteTopics(kafka: Kafka, names: string[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const topics = names.filter((name) => existing.has(name));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
  } catch {
    // best effort: a left-over topic only costs disk until the broker is stopped
  } finally {
    await admin.disconnect();
  }
}

/** The pipeline's topics of one run, reading `input` (shared by the runs of a benchmark). */
export function pipelineTopics(prefix: string, input: string): Config['topics'] {
  const base = uniqueName(prefix);
  return {
    input,
    matches: `${base}.matches`,
    events: `${base}.events`,
    storage: `${base}.storage`,
    deadLetters: `${base}.dlq`,
    state: `${base}.state`,
    partitions: PARTITIONS,
    replicationFactor: 1,
  };
}

/** Creates the output and state topics (and the input, if missing); returns the former's names for deletion. */
export async function createOutputTopics(
  kafka: Kafka,
  topics: Config['topics'],
  matchesConfig: { name: string; value: string }[] = [],
): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    if (matchesConfig.length > 0) {
      await createTopicsWithLeaders(admin, [
        {
          topic: topics.matches,
          numPartitions: topics.partitions,
          replicationFactor: 1,
          configEntries: matchesConfig,
        },
      ]);
    }
    await createPipelineTopics(admin, topics, topics);
  } finally {
    await admin.disconnect();
  }
  return [topics.matches, topics.events, topics.storage, topics.deadLetters, topics.state];
}
