// Whether a command's topics exist, asked once before anything is read or written. A missing
// topic is the operator's to create (`topics create`); left to the clients, each asked the
// broker for it through its own retries and failed without a code of ours: `run` started
// before `topics create` ended as an unexpected failure, after 81 s for the state topic.
import type { Admin, Kafka } from 'kafkajs';
import { KafkaError, notAuthorized, onTopics } from './errors.ts';

/**
 * KAFKA_NOT_AUTHORIZED for the first of `unlisted` the broker refuses to describe: the listing
 * leaves out what the principal may not describe, and such a topic was reported as missing
 * (`topics create` then made nothing, or hung a minute on a topic it could not see). The broker
 * refuses alike whether the topic exists or not: either way, Describe is what is lacking.
 */
export async function describeRefused(
  admin: Admin,
  unlisted: readonly string[],
): Promise<KafkaError | undefined> {
  for (const topic of unlisted) {
    const refusal = await admin.fetchTopicMetadata({ topics: [topic] }).then(
      () => undefined,
      (error: unknown) => notAuthorized(error, onTopics('Describe', topic)),
    );
    if (refusal) return refusal;
  }
  return undefined;
}

export async function assertTopicsExist(kafka: Kafka, topics: readonly string[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = [...new Set(topics)].filter((topic) => !existing.has(topic));
    const [first] = missing;
    if (first === undefined) return;
    const refusal = await describeRefused(admin, missing);
    if (refusal) throw refusal;
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
