// Creates the pipeline's topics if they are missing: storage and internal state are
// compacted (latest value per key); the others keep a retention window.
import type { Admin, ITopicConfig } from 'kafkajs';

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
  await createTopicsWithLeaders(
    admin,
    wanted.map((t) => ({
      ...t,
      numPartitions: layout.partitions,
      replicationFactor: layout.replicationFactor,
    })),
  );
  return wanted.map((t) => t.topic);
}

/** Creates the topics and resolves once every partition has a leader (see waitForLeaders). */
export async function createTopicsWithLeaders(admin: Admin, topics: ITopicConfig[]): Promise<void> {
  await admin.createTopics({ waitForLeaders: false, topics });
  await waitForLeaders(
    admin,
    topics.map((t) => t.topic),
  );
}

/**
 * Resolves once every partition of the topics has a leader. kafkajs's own wait gives up
 * when a KRaft broker answers "unknown topic" for a topic it created a moment ago (its
 * metadata cache lags under load); here that answer just means "not yet".
 */
async function waitForLeaders(admin: Admin, topics: string[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { topics: metadata } = await admin.fetchTopicMetadata({ topics });
      if (
        metadata.length === topics.length &&
        metadata.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))
      ) {
        return;
      }
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    if (Date.now() > deadline)
      throw new Error(`topics without leaders after ${timeoutMs} ms: ${topics.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
