// The storage topic read back as the partner state's changelog: end offsets per partition,
// and ranges of partitions replayed in order. Reading uses a throw-away consumer group (a
// replay is never a member of the pipeline's group) that seeks each wanted partition to
// where its restore starts and pauses the others.
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KafkaMessage } from 'kafkajs';
import { finishedByOf, type StoredPartner } from '../pipeline/outputs.ts';
import { backoffDelay } from '../retry/backoff.ts';
import { registryFailure } from '../serde/registry-failure.ts';
import { StateError } from '../state/errors.ts';
import type { StateChange } from '../state/partition-store.ts';
import type { ChangelogOffsets, StateChangelog } from '../state/partner-state.ts';
import { describeTopicConfig } from './topic-configs.ts';
import type { TopicReaders } from './topic-reader.ts';
import { topicOffsets } from './topic-offsets.ts';

/**
 * Fetch sizes of a restore, well below kafkajs's defaults (1 MB per partition, 10 MB per
 * fetch): a 1 MB batch is some 3,000 decoded records that outlive the young generation, and
 * restoring 500,000 partners peaked at 380-415 MB RSS; with these, 175 MB at about the same
 * rate. A record batch larger than a limit is still returned whole, so a restore always moves.
 */
const RESTORE_FETCH = { maxBytesPerPartition: 128 * 1024, maxBytes: 512 * 1024 };

const DEFAULT_DELETE_RETENTION_MS = 86_400_000;

/**
 * How long a restore waits for a schema registry that does not answer (a storage record of a
 * schema id not asked for yet), asking again with a backoff, before it fails: a blip is ridden
 * out, as the intake rides it out.
 */
const REGISTRY_WAIT_MS = 60_000;
const REGISTRY_RETRY = { initialDelayMs: 500, maxDelayMs: 5_000 };

interface StorageValue {
  partnerId: string;
  record: StoredPartner['record'];
  contentHash: string;
  svcId: string | null;
  outcome: StoredPartner['outcome'];
  bestCandidate: StoredPartner['bestCandidate'];
  matchedAt: number;
  /** Absent in records written before the field existed. */
  source?: StoredPartner['source'];
  /** Absent in records written before the field existed. */
  rerun?: StoredPartner['rerun'];
}

export class KafkaStateChangelog implements StateChangelog {
  readonly #readers: TopicReaders;
  readonly #registry: SchemaRegistry;
  readonly name: string;

  constructor(readers: TopicReaders, registry: SchemaRegistry, topic: string) {
    this.#readers = readers;
    this.#registry = registry;
    this.name = topic;
  }

  /**
   * Input partition N's partners live in storage partition N: the two topics must have as
   * many partitions. Topics not there yet are left to the steps that need them.
   */
  async assertCopartitioned(input: string): Promise<void> {
    const admin = this.#readers.kafka.admin();
    await admin.connect();
    try {
      const existing = new Set(await admin.listTopics());
      if (!existing.has(input) || !existing.has(this.name)) return;
      const { topics } = await admin.fetchTopicMetadata({ topics: [input, this.name] });
      const count = (topic: string) => topics.find((t) => t.name === topic)?.partitions.length ?? 0;
      const [inputPartitions, storagePartitions] = [count(input), count(this.name)];
      if (inputPartitions !== storagePartitions) {
        throw new StateError(
          'STATE_NOT_COPARTITIONED',
          `storage topic ${this.name} has ${storagePartitions} partitions and input topic ${input} has ` +
            `${inputPartitions}: the partner state of input partition N is kept in storage partition N, ` +
            'so both need the same number of partitions',
          { details: { input, storage: this.name, inputPartitions, storagePartitions } },
        );
      }
    } finally {
      await admin.disconnect();
    }
  }

  async offsets(): Promise<Map<number, ChangelogOffsets>> {
    const admin = this.#readers.kafka.admin();
    await admin.connect();
    try {
      const offsets = await topicOffsets(admin, this.name);
      return new Map(offsets.map((p) => [p.partition, { low: Number(p.low), high: Number(p.high) }]));
    } finally {
      await admin.disconnect();
    }
  }

  /** The topic's delete.retention.ms; Kafka's default (24 h) where the broker names none. */
  async tombstoneRetentionMs(): Promise<number> {
    const admin = this.#readers.kafka.admin();
    await admin.connect();
    try {
      const resources = await describeTopicConfig(admin, [this.name], 'delete.retention.ms');
      const [topic] = resources;
      if (!topic || topic.errorCode !== 0)
        throw new Error(`delete.retention.ms of topic ${this.name}: ${topic?.errorMessage || 'not known'}`);
      const value = topic.configEntries.find((e) => e.configName === 'delete.retention.ms')?.configValue;
      if (!value) return DEFAULT_DELETE_RETENTION_MS;
      // Not a number would make every checkpoint look young enough to trust.
      if (!/^\d+$/.test(value))
        throw new Error(`delete.retention.ms of topic ${this.name} is not a number: ${value}`);
      return Number(value);
    } finally {
      await admin.disconnect();
    }
  }

  async read(
    ranges: { partition: number; from: number; to: number }[],
    apply: (partition: number, changes: StateChange[], next: number) => void,
  ): Promise<void> {
    const open = new Map(ranges.filter((r) => r.from < r.to).map((r) => [r.partition, r]));
    if (open.size === 0) return;
    const topic = this.name;
    const consumer = this.#readers.consumer('restore', RESTORE_FETCH);
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      const done = Promise.withResolvers<undefined>();
      const advance = (partition: number, changes: StateChange[], next: number) => {
        const range = open.get(partition);
        if (!range) return;
        if (next > range.from) {
          apply(partition, changes, Math.min(next, range.to));
          range.from = Math.min(next, range.to);
        }
        if (range.from >= range.to) {
          open.delete(partition);
          consumer.pause([{ topic, partitions: [partition] }]);
          if (open.size === 0) done.resolve(undefined);
        }
      };
      // A fetch of transaction markers (or aborted records) alone never reaches eachBatch;
      // the storage topic written exactly-once can end with one, which counts as read.
      consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
        if (payload.batchSize === 0 && open.has(payload.partition))
          advance(payload.partition, [], Number(payload.lastOffset) + 1);
      });
      // kafkajs retries a failing eachBatch, then restarts the consumer, which rejoins with
      // its seeks and pauses lost and fails again on the same record, forever: run()'s promise
      // settled long before. A record that cannot be read ends the restore with it instead.
      consumer.on(consumer.events.CRASH, ({ payload }) =>
        done.reject(this.#readers.refused(topic, payload.error)),
      );
      consumer
        .run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
            const range = open.get(batch.partition);
            if (!range) return;
            const changes: StateChange[] = [];
            let next = range.from;
            try {
              for (const message of batch.messages) {
                const offset = Number(message.offset);
                if (offset < range.from) continue;
                if (offset >= range.to) break;
                changes.push(await this.#change(message, batch.partition, offset, heartbeat));
                next = offset + 1;
              }
              // Offsets a compaction removed count as read.
              if (Number(batch.lastOffset()) + 1 >= range.to) next = range.to;
              advance(batch.partition, changes, next);
            } catch (error) {
              done.reject(error);
              return;
            }
            // Only resolved offsets move kafkajs's fetch position: without this, every fetch
            // after the first returned the same batch again, and a partition larger than one
            // fetch was never restored.
            resolveOffset(batch.lastOffset());
          },
        })
        .catch(done.reject);
      for (const range of open.values())
        consumer.seek({ topic, partition: range.partition, offset: String(range.from) });
      const idle = [...(await this.offsets()).keys()].filter((p) => !open.has(p));
      if (idle.length > 0) consumer.pause([{ topic, partitions: idle }]);
      await done.promise;
    } finally {
      await consumer.disconnect();
    }
  }

  async #change(
    { key, value, headers }: KafkaMessage,
    partition: number,
    offset: number,
    heartbeat: () => Promise<void>,
  ): Promise<StateChange> {
    const partnerId = key?.toString('utf8') ?? '';
    // The input record the storage record finished without a state of its own (a delete, a
    // lookup that failed for good): read again by this partition's next owner, it is known as
    // done. Storage records written before the headers existed name none.
    const finishedBy = finishedByOf(headers);
    if (value === null)
      return finishedBy ? { partnerId, stored: null, finishedBy } : { partnerId, stored: null };
    const decoded = await this.#decoded(value, partition, offset, heartbeat);
    return {
      partnerId: partnerId || decoded.partnerId,
      stored: {
        hash: decoded.contentHash,
        svcId: decoded.svcId,
        outcome: decoded.outcome,
        bestCandidate: decoded.bestCandidate,
        record: decoded.record,
        matchedAt: decoded.matchedAt,
        source: decoded.source ?? null,
        rerun: decoded.rerun ?? null,
      },
      ...(finishedBy ? { finishedBy } : {}),
    };
  }
  /**
   * The storage record's value. The registry not answering is waited for (REGISTRY_WAIT_MS); it
   * and refused credentials fail the restore as the registry's, not the record's: they were
   * "storage record ... cannot be decoded", at the first refused request, and sent the operator
   * after the data.
   */
  async #decoded(
    value: Buffer,
    partition: number,
    offset: number,
    heartbeat: () => Promise<void>,
  ): Promise<StorageValue> {
    const details = { topic: this.name, partition, offset };
    const started = Date.now();
    for (let attempt = 1; ; attempt += 1) {
      try {
        return (await this.#registry.decode(value)) as StorageValue;
      } catch (error) {
        const schemaId = value.length >= 5 && value[0] === 0 ? value.readInt32BE(1) : undefined;
        const registry = registryFailure(error, schemaId);
        if (registry?.code === 'SCHEMA_REGISTRY_UNAVAILABLE' && Date.now() - started < REGISTRY_WAIT_MS) {
          await sleep(backoffDelay(attempt, REGISTRY_RETRY));
          // The restore's consumer stays in its group while it waits.
          await heartbeat();
          continue;
        }
        if (registry) {
          throw new StateError(
            'STATE_RESTORE_FAILED',
            `partner state of ${this.name}/${partition} not restored: ${registry.message}`,
            { cause: registry, details: { ...details, causeCode: registry.code } },
          );
        }
        throw new StateError(
          'STATE_RESTORE_FAILED',
          `storage record ${this.name}/${partition}@${offset} cannot be decoded: ${(error as Error).message}`,
          { cause: error, details },
        );
      }
    }
  }
}
