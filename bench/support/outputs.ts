// Reading back what a run wrote: counts per key of an output topic.
import type { Kafka } from 'kafkajs';
import { TopicReaders } from '../../src/kafka/topic-reader.ts';

export interface TopicCounts {
  messages: number;
  keys: Set<string>;
}

export async function countMessages(kafka: Kafka, topic: string): Promise<TopicCounts> {
  const keys = new Set<string>();
  const messages = await new TopicReaders(kafka).readToEnd(
    topic,
    (message) => void keys.add(message.key?.toString() ?? ''),
  );
  return { messages, keys };
}
