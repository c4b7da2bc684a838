// Whether a command's topics exist, asked once before anything is read or written. A missing
// topic is the operator's to create (`topics create`); left to the clients, each asked the
// broker for it through its own retries and failed without a code of ours: `run` started
// before `topics create` ended as an unexpected failure, after 81 s for the state topic.
import type { Kafka } from 'kafkajs';
import { KafkaError } from './errors.ts';

export async function assertTopicsExist(kafka: Kafka, topics: readonly string[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = [...new Set(topics)].filter((topic) => !existing.has(topic));
    const [first] = missing;
    if (first === undefined) return;
    const named =
      missing.length === 1 ? `topic ${first} does not exist` : `topics ${missing.join(', ')} do not exist`;
    throw new KafkaError(
      'TOPIC_MISSING',
      `${named}; \`partner-enrich topics create\` creates the pipeline's topics`,
      {
        details: { topic: first, missing },
      },
    );
  } finally {
    await admin.disconnect();
  }
}
