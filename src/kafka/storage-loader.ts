// Rebuilds the storage index (latest state per partner) from the compacted storage
// topic, so that events and skip-unchanged survive restarts.
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { Kafka } from 'kafkajs';
import type { StoredPartner } from '../pipeline/outputs.ts';
import { readTopicToEnd } from './topic-reader.ts';

interface StorageValue {
  partnerId: string;
  contentHash: string;
  svcId: string | null;
  outcome: StoredPartner['outcome'];
  bestCandidate: StoredPartner['bestCandidate'];
}

export async function loadStorageIndex(
  kafka: Kafka,
  registry: SchemaRegistry,
  topic: string,
): Promise<Map<string, StoredPartner>> {
  const index = new Map<string, StoredPartner>();
  await readTopicToEnd(kafka, topic, async (message) => {
    const key = message.key?.toString('utf8');
    if (!key) return;
    if (message.value === null) {
      index.delete(key);
      return;
    }
    const value = (await registry.decode(message.value)) as StorageValue;
    index.set(key, {
      hash: value.contentHash,
      svcId: value.svcId,
      outcome: value.outcome,
      bestCandidate: value.bestCandidate,
    });
  });
  return index;
}
