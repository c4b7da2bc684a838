// A topic's low and high offsets per partition. kafkajs's admin.fetchTopicOffsets gives up on a
// leadership error (it retries only an unknown topic): a partition whose leader just moved, or
// a topic so new that its leader does not serve it yet, failed the read once (seen in CI:
// "This server is not the leader for that topic-partition" right after the topic was created).
// Those are asked again, with the topic's metadata read anew, for up to about 20 s: a leader
// that crashed stays the partition's leader until the cluster fences it (9 s by default).
import type { Admin } from 'kafkajs';

export interface PartitionOffsets {
  partition: number;
  low: string;
  high: string;
}

const ATTEMPTS = 12;
const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 3_000;

const isRetriable = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as { retriable?: unknown }).retriable === true;

export async function topicOffsets(
  admin: Admin,
  topic: string,
  sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
): Promise<PartitionOffsets[]> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return (await admin.fetchTopicOffsets(topic)).map(({ partition, low, high }) => ({
        partition,
        low,
        high,
      }));
    } catch (error) {
      if (!isRetriable(error) || attempt >= ATTEMPTS) throw error;
      await sleep(Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (attempt - 1)));
      // Where the partitions' leaders are now.
      await admin.fetchTopicMetadata({ topics: [topic] }).catch(() => undefined);
    }
  }
}
