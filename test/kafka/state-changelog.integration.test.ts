// The storage topic read back as the partner state's changelog, on the real broker and
// registry: a partition larger than one fetch is read to its end, and a record that cannot
// be decoded fails the restore.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { registerTopicEncoder } from '../../src/kafka/avro-encoder.ts';
import { KafkaStateChangelog } from '../../src/kafka/state-changelog.ts';
import { PartnerState } from '../../src/state/partner-state.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { kafkaClient, uniqueName, withTopics } from '../support/kafka.ts';
import { deleteSubject } from '../support/schema-registry.ts';

const subjects: string[] = [];

const storageValue = (record: PartnerRecord, i: number) => ({
  partnerId: record.partnerId,
  record,
  contentHash: `hash-${i}`,
  svcId: null,
  outcome: 'NO_MATCH',
  bestCandidate: null,
  matchedAt: 0,
});

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
              value: encoder.encode(storageValue(record, start + n)),
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

  it('regression: a restore that met a storage record it could not decode hung silently instead of failing with STATE_RESTORE_FAILED', async () => {
    const kafka = kafkaClient();
    const topic = uniqueName('changelog');
    subjects.push(`${topic}-value`);
    const { cleanup } = await withTopics(kafka, [{ topic, numPartitions: 1 }]);
    const dir = mkdtempSync(join(tmpdir(), 'changelog-undecodable-'));
    const state = new PartnerState({
      dir,
      changelog: new KafkaStateChangelog(
        kafka,
        new SchemaRegistry({ host: inject('schemaRegistryUrl') }),
        topic,
      ),
    });
    try {
      const encoder = await registerTopicEncoder(
        { url: inject('schemaRegistryUrl') },
        topic,
        'StorageRecord',
      );
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({
        topic,
        messages: [
          { key: 'P-0', value: encoder.encode(storageValue(partner(0), 0)) },
          // Not in the registry's wire format: what a foreign writer to the topic leaves.
          { key: 'P-1', value: Buffer.from('{"partnerId":"P-1"}') },
          { key: 'P-2', value: encoder.encode(storageValue(partner(2), 2)) },
        ],
      });
      await producer.disconnect();

      const started = Date.now();
      let timer: NodeJS.Timeout | undefined;
      const hung = new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve('still restoring after 30 s'), 30_000);
      });
      const outcome = await Promise.race([
        state.restore([{ topic: 'partners', partition: 0 }]).then(
          () => 'restored',
          (error: unknown) => error,
        ),
        hung,
      ]).finally(() => clearTimeout(timer));

      expect(outcome).toMatchObject({
        code: 'STATE_RESTORE_FAILED',
        details: { topic, partition: 0, offset: 1 },
      });
      // kafkajs's retries of the batch (about 10 s) are not waited for.
      expect(Date.now() - started).toBeLessThan(10_000);
      // The partition is not held: nothing is processed on a state not restored.
      expect(state.partitions).toEqual([]);
    } finally {
      state.close();
      rmSync(dir, { recursive: true, force: true });
      await cleanup();
    }
  }, 60_000);

  it("reads how long the storage topic keeps tombstones: its delete.retention.ms, or the broker's 24 h", async () => {
    const kafka = kafkaClient();
    const [own, defaulted] = [uniqueName('changelog'), uniqueName('changelog')];
    const { cleanup } = await withTopics(kafka, [
      { topic: own, numPartitions: 1, configEntries: [{ name: 'delete.retention.ms', value: '3600000' }] },
      { topic: defaulted, numPartitions: 1 },
    ]);
    try {
      const registry = new SchemaRegistry({ host: inject('schemaRegistryUrl') });
      expect(await new KafkaStateChangelog(kafka, registry, own).tombstoneRetentionMs()).toBe(3_600_000);
      expect(await new KafkaStateChangelog(kafka, registry, defaulted).tombstoneRetentionMs()).toBe(
        86_400_000,
      );
    } finally {
      await cleanup();
    }
  });
});
