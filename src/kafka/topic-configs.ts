// One configuration value of topics, read with DescribeConfigs: the output limits, the storage
// topic's tombstone retention, the compaction of the storage and state topics. Refused (no
// DescribeConfigs ACL), each read was an unexpected failure with a stack, exit 1.
// The default import: Node's named-export detection of CommonJS kafkajs misses ConfigResourceTypes.
import kafkajs, { type Admin, type DescribeConfigResponse } from 'kafkajs';
import { notAuthorized, onTopics, type KafkaError } from './errors.ts';

const describe = (admin: Admin, topics: readonly string[], configName: string) =>
  admin.describeConfigs({
    includeSynonyms: false,
    resources: topics.map((name) => ({
      type: kafkajs.ConfigResourceTypes.TOPIC,
      name,
      configNames: [configName],
    })),
  });

/** Each topic's entry for `configName`; KAFKA_NOT_AUTHORIZED naming the topics the broker refuses. */
export async function describeTopicConfig(
  admin: Admin,
  topics: readonly string[],
  configName: string,
): Promise<DescribeConfigResponse['resources']> {
  try {
    return (await describe(admin, topics, configName)).resources;
  } catch (error) {
    throw (await refusedTopics(admin, topics, configName, error)) ?? error;
  }
}

/**
 * KAFKA_NOT_AUTHORIZED naming the topics whose configuration the broker refuses to describe,
 * when `error` is such a refusal: its answer names none, so each topic is asked alone.
 */
async function refusedTopics(
  admin: Admin,
  topics: readonly string[],
  configName: string,
  error: unknown,
): Promise<KafkaError | undefined> {
  if (!notAuthorized(error, onTopics('DescribeConfigs', topics))) return undefined;
  if (topics.length === 1) return notAuthorized(error, onTopics('DescribeConfigs', topics));
  const refused: string[] = [];
  for (const topic of topics)
    await describe(admin, [topic], configName).catch((each: unknown) => {
      if (!notAuthorized(each, onTopics('DescribeConfigs', [topic]))) throw each;
      refused.push(topic);
    });
  return notAuthorized(error, onTopics('DescribeConfigs', refused.length > 0 ? refused : topics));
}
