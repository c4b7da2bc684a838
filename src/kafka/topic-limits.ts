// The record batch limit of topics: the broker refuses a batch larger than its topic's
// max.message.bytes, so whoever writes big records cuts its requests to it.
import type { Kafka, RetryOptions } from 'kafkajs';
import { RECORD_BATCH_OVERHEAD } from './record-size.ts';
import { describeTopicConfig } from './topic-configs.ts';

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
    const resources = await describeTopicConfig(admin, topics, 'max.message.bytes');
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
