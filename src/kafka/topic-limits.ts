// The record batch limit of topics: the broker refuses a batch larger than its topic's
// max.message.bytes, so whoever writes big records cuts its requests to it.
// The default import: Node's named-export detection of CommonJS kafkajs misses ConfigResourceTypes.
import kafkajs, { type Admin, type Kafka, type RetryOptions } from 'kafkajs';
import { notAuthorized, type KafkaError } from './errors.ts';
import { RECORD_BATCH_OVERHEAD } from './record-size.ts';

const describeLimits = (admin: Admin, topics: string[]) =>
  admin.describeConfigs({
    includeSynonyms: false,
    resources: topics.map((name) => ({
      type: kafkajs.ConfigResourceTypes.TOPIC,
      name,
      configNames: ['max.message.bytes'],
    })),
  });

const describeConfigsOn = (topics: string[]) => ({
  topic: { operation: 'DescribeConfigs', resource: `Topic ${topics.join(', ')}` },
});

/**
 * KAFKA_NOT_AUTHORIZED naming the topics whose configuration the broker refuses to describe,
 * when `error` is such a refusal: its answer names none, so each topic is asked alone.
 */
async function refusedTopics(
  admin: Admin,
  topics: string[],
  error: unknown,
): Promise<KafkaError | undefined> {
  if (!notAuthorized(error, describeConfigsOn(topics))) return undefined;
  const refused: string[] = [];
  for (const topic of topics)
    await describeLimits(admin, [topic]).catch((each: unknown) => {
      if (!notAuthorized(each, describeConfigsOn([topic]))) throw each;
      refused.push(topic);
    });
  return notAuthorized(error, describeConfigsOn(refused.length > 0 ? refused : topics));
}

/**
 * Each topic's max.message.bytes, which is the broker's message.max.bytes unless the
 * topic overrides it.
 */
export async function topicLimits(
  kafka: Kafka,
  topics: string[],
  retry?: RetryOptions,
): Promise<Map<string, number>> {
  const admin = kafka.admin(retry ? { retry } : {});
  await admin.connect();
  try {
    // Refused (no DescribeConfigs ACL), this was an unexpected failure, exit 1 with a stack.
    const { resources } = await describeLimits(admin, topics).catch(async (error: unknown) => {
      throw (await refusedTopics(admin, topics, error)) ?? error;
    });
    return new Map(
      resources.map((r) => {
        const value = Number(r.configEntries.find((e) => e.configName === 'max.message.bytes')?.configValue);
        if (r.errorCode !== 0 || !Number.isSafeInteger(value) || value <= RECORD_BATCH_OVERHEAD)
          throw new Error(`max.message.bytes of topic ${r.resourceName}: ${r.errorMessage || 'not known'}`);
        return [r.resourceName, value];
      }),
    );
  } finally {
    await admin.disconnect();
  }
}
