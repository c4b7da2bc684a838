// Creates the pipeline's topics if they are missing: storage and internal state are
// compacted (latest value per key); the others keep a retention window.
import type { Admin } from 'kafkajs';

export interface TopicNames {
  input: string;
  matches: string;
  events: string;
  storage: string;
  deadLetters: string;
  state: string;
}

export interface TopicLayout {
  partitions: number;
  replicationFactor: number;
}

const COMPACTED = [{ name: 'cleanup.policy', value: 'compact' }];

export async function createPipelineTopics(
  admin: Admin,
  names: TopicNames,
  layout: TopicLayout,
): Promise<string[]> {
  const existing = new Set(await admin.listTopics());
  const wanted = [
    { topic: names.input, configEntries: [] },
    { topic: names.matches, configEntries: [] },
    { topic: names.events, configEntries: [] },
    { topic: names.storage, configEntries: COMPACTED },
    { topic: names.deadLetters, configEntries: [] },
    { topic: names.state, configEntries: COMPACTED },
  ].filter((t) => !existing.has(t.topic));
  if (wanted.length === 0) return [];
  await admin.createTopics({
    waitForLeaders: true,
    topics: wanted.map((t) => ({
      ...t,
      numPartitions: layout.partitions,
      replicationFactor: layout.replicationFactor,
    })),
  });
  return wanted.map((t) => t.topic);
}
