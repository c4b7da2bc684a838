// The storage topic read back as the partner state's changelog, on the real broker and
// registry: a partition larger than one fetch is read to its end.
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { registerTopicEncoder } from '../../src/kafka/avro-encoder.ts';
import { KafkaStateChangelog } from '../../src/kafka/state-changelog.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { kafkaClient, uniqueName, withTopics } from '../support/kafka.ts';
import { deleteSubject } from '../support/schema-registry.ts';

const subjects: string[] = [];

const partner = (i: number): PartnerRecord => ({
  partnerId: `P-${i}`,
  sourceSystem: 'test',
  // About 1.5 KB a record: 1,500 records are more than one fetch of a partition (128 KB in a
  // restore, 1 MB by kafkajs's default).
  names: [`Partner ${i} ${'x'.repeat(1_500)}`],
  legalForm: null,
  addresses: [],
  identifiers: [],
  taxNumbers: [],
  changedAt: 0,
});

describe('storage topic as the partner state changelog', () => {
  afterAll(async () => {
    for (const subject of subjects) await deleteSubject(subject);
  });

  it('regression: a restore larger than one fetch of its partition reads to the end instead of fetching its first batch forever', async () => {
    const kafka = kafkaClient();
    const topic = uniqueName('changelog');
    subjects.push(`${topic}-value`);
    const { cleanup } = await withTopics(kafka, [{ topic, numPartitions: 1 }]);
    try {
      const encoder = await registerTopicEncoder(
        { url: inject('schemaRegistryUrl') },
        topic,
        'StorageRecord',
      );
      const producer = kafka.producer();
      await producer.connect();
      const count = 1_500;
      // Sent in several requests, so that the partition holds several record batches and a
      // fetch can stop between them.
      for (let start = 0; start < count; start += 100) {
        await producer.send({
          topic,
          messages: Array.from({ length: 100 }, (_, n) => {
            const record = partner(start + n);
            return {
              key: record.partnerId,
              value: encoder.encode({
                partnerId: record.partnerId,
                record,
                contentHash: `hash-${start + n}`,
                svcId: null,
                outcome: 'NO_MATCH',
                bestCandidate: null,
                matchedAt: 0,
              }),
            };
          }),
        });
      }
      await producer.disconnect();

      const changelog = new KafkaStateChangelog(
        kafka,
        new SchemaRegistry({ host: inject('schemaRegistryUrl') }),
        topic,
      );
      const applied: { ids: string[]; next: number }[] = [];
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`restore stuck after ${applied.length} batches`)), 30_000);
      });
      try {
        await Promise.race([
          changelog.read([{ partition: 0, from: 0, to: count }], (_, changes, next) =>
            applied.push({ ids: changes.map((c) => c.partnerId), next }),
          ),
          timedOut,
        ]);
      } finally {
        clearTimeout(timer);
      }

      expect(applied.length).toBeGreaterThan(1);
      expect(applied.flatMap((a) => a.ids)).toEqual(Array.from({ length: count }, (_, i) => `P-${i}`));
      expect(applied.at(-1)?.next).toBe(count);
    } finally {
      await cleanup();
    }
  }, 60_000);
});
