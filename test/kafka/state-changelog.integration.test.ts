// The storage topic read back as the partner state's changelog, on the real broker and
// registry: a partition larger than one fetch is read to its end, a record that cannot be
// decoded fails the restore, and a storage tombstone's input tombstone is restored with it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { IHeaders } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { registerTopicEncoder } from '../../src/kafka/avro-encoder.ts';
import { KafkaStateChangelog } from '../../src/kafka/state-changelog.ts';
import { TopicReaders } from '../../src/kafka/topic-reader.ts';
import { deleteOutputs, type OutputMessage } from '../../src/pipeline/outputs.ts';
import type { PartnerWork } from '../../src/pipeline/records.ts';
import { PartnerState } from '../../src/state/partner-state.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { produce } from '../support/enrichment.ts';
import { kafkaClient, uniqueName, withTopics } from '../support/kafka.ts';
import { startRegistryProxy } from '../support/registry-proxy.ts';
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

/**
 * A storage topic of one partition with its encoder, and a partner state on an empty
 * directory that restores from it; `close` removes all of them.
 */
async function restoringFromNewTopic() {
  const kafka = kafkaClient();
  const topic = uniqueName('changelog');
  subjects.push(`${topic}-value`);
  const { cleanup } = await withTopics(kafka, [{ topic, numPartitions: 1 }]);
  const dir = mkdtempSync(join(tmpdir(), 'changelog-restore-'));
  const registry = { host: inject('schemaRegistryUrl') };
  const state = new PartnerState({
    dir,
    changelog: new KafkaStateChangelog(new TopicReaders(kafka), new SchemaRegistry(registry), topic),
  });
  const close = async () => {
    state.close();
    rmSync(dir, { recursive: true, force: true });
    await cleanup();
  };
  try {
    const encoder = await registerTopicEncoder({ url: registry.host }, topic, 'StorageRecord');
    return { kafka, topic, state, encoder, close };
  } catch (error) {
    await close();
    throw error;
  }
}

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
        new TopicReaders(kafka),
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

  it('regression: a restore that met the schema registry away (a storage record of a schema id not asked for yet) failed at once with STATE_RESTORE_FAILED, "storage record ... cannot be decoded", and run exited; now it waits for the registry and restores', async () => {
    const kafka = kafkaClient();
    const topic = uniqueName('changelog');
    subjects.push(`${topic}-value`);
    const { cleanup } = await withTopics(kafka, [{ topic, numPartitions: 1 }]);
    const proxy = await startRegistryProxy(inject('schemaRegistryUrl'));
    const dir = mkdtempSync(join(tmpdir(), 'changelog-restore-'));
    const state = new PartnerState({
      dir,
      changelog: new KafkaStateChangelog(
        new TopicReaders(kafka),
        new SchemaRegistry({ host: proxy.url }),
        topic,
      ),
    });
    try {
      const encoder = await registerTopicEncoder(
        { url: inject('schemaRegistryUrl') },
        topic,
        'StorageRecord',
      );
      await produce(
        kafka,
        topic,
        [0, 1, 2].map((i) => ({ key: `P-${i}`, value: encoder.encode(storageValue(partner(i), i)) })),
      );
      proxy.away();
      const restored = state.restore([{ topic: 'partners', partition: 0 }]).then(
        () => 'restored',
        (error: unknown) => error,
      );
      const early = await Promise.race([restored, sleep(4_000).then(() => 'waiting')]);
      proxy.back();
      expect(early).toBe('waiting');
      expect(await restored).toBe('restored');
      expect(state.get({ topic: 'partners', partition: 0 }, 'P-2')).toMatchObject({ hash: 'hash-2' });
    } finally {
      state.close();
      rmSync(dir, { recursive: true, force: true });
      await proxy.close();
      await cleanup();
    }
  }, 60_000);

  it('regression: a restore that met a storage record it could not decode hung silently instead of failing with STATE_RESTORE_FAILED', async () => {
    const { kafka, topic, state, encoder, close } = await restoringFromNewTopic();
    try {
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
      await close();
    }
  }, 60_000);

  it('regression: a fresh directory restored from the storage topic knows which input tombstone deleted a partner (read again by the next owner after a kill, it became DELETE_UNKNOWN_PARTNER); older storage tombstones name none', async () => {
    const { kafka, topic, state, encoder, close } = await restoringFromNewTopic();
    try {
      // The storage tombstone as the pipeline writes it for input tombstone partners@0:7.
      const tombstone: PartnerWork = {
        id: 'w-1',
        partnerId: 'P-0',
        kind: 'delete',
        records: [
          {
            input: {
              position: { topic: 'partners', partition: 0, offset: 7 },
              key: Buffer.from('P-0'),
              value: null,
              headers: {},
              timestamp: 1_700_000_000_000,
            },
          },
        ],
        state: 'scheduled',
        attempts: 0,
        epoch: 1,
      };
      const written = deleteOutputs(tombstone, undefined, { storageId: 's', now: Date.now }).find(
        (m) => m.output === 'storage',
      ) as OutputMessage;
      await produce(kafka, topic, [
        { key: 'P-0', value: encoder.encode(storageValue(partner(0), 0)) },
        { key: 'P-1', value: encoder.encode(storageValue(partner(1), 1)) },
        { key: 'P-0', value: null, headers: written.headers as IHeaders },
        // Written before storage tombstones named their input tombstone.
        { key: 'P-1', value: null },
      ]);

      const ref = { topic: 'partners', partition: 0 };
      await state.restore([ref]);
      expect(state.size).toBe(0);
      expect(state.finishedBy(ref, 'P-0')).toEqual({ offset: 7, timestamp: 1_700_000_000_000 });
      expect(state.finishedBy(ref, 'P-1')).toBeUndefined();
    } finally {
      await close();
    }
  }, 60_000);

  it("a directory restored from the storage topic keeps each partner's rerun mark (a share moved to another replica counts its lost chunk's partners by it); records without one read as none", async () => {
    const { kafka, topic, state, encoder, close } = await restoringFromNewTopic();
    try {
      const mark = { jobId: 'nightly-1', change: 'gainedMatch' };
      await produce(kafka, topic, [
        { key: 'P-0', value: encoder.encode({ ...storageValue(partner(0), 0), rerun: mark }) },
        { key: 'P-1', value: encoder.encode(storageValue(partner(1), 1)) },
      ]);
      const ref = { topic: 'partners', partition: 0 };
      await state.restore([ref]);
      expect(state.get(ref, 'P-0')?.rerun).toEqual(mark);
      expect(state.get(ref, 'P-1')?.rerun).toBeNull();
    } finally {
      await close();
    }
  }, 60_000);

  it('a directory restored from the storage topic knows the input records a coalesced lookup stood for (the older one read again alone by the next owner was looked up again); records without it read as one record', async () => {
    const { kafka, topic, state, encoder, close } = await restoringFromNewTopic();
    try {
      const coalesced = { offset: 12, timestamp: 12_000, coalescedFrom: { offset: 10, timestamp: 10_000 } };
      await produce(kafka, topic, [
        { key: 'P-0', value: encoder.encode({ ...storageValue(partner(0), 0), source: coalesced }) },
        {
          key: 'P-1',
          value: encoder.encode({ ...storageValue(partner(1), 1), source: { offset: 7, timestamp: 0 } }),
        },
      ]);
      const ref = { topic: 'partners', partition: 0 };
      await state.restore([ref]);
      expect(state.get(ref, 'P-0')?.source).toEqual(coalesced);
      expect(state.get(ref, 'P-1')?.source).toEqual({ offset: 7, timestamp: 0, coalescedFrom: null });
    } finally {
      await close();
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
      expect(
        await new KafkaStateChangelog(new TopicReaders(kafka), registry, own).tombstoneRetentionMs(),
      ).toBe(3_600_000);
      expect(
        await new KafkaStateChangelog(new TopicReaders(kafka), registry, defaulted).tombstoneRetentionMs(),
      ).toBe(86_400_000);
    } finally {
      await cleanup();
    }
  });
});
