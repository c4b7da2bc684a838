// At-least-once delivery reads again what was not committed, tombstones too: `partner-enrich
// run` killed with SIGKILL after it deleted partners (their Deleted events and storage
// tombstones acknowledged) and before it committed the tombstones' positions, then started
// again. A tombstone read again whose delete was done is finished as a redelivery, on the
// same disk (the partition's file remembers which tombstone deleted the partner) as on a
// fresh one (the storage tombstone names it); a tombstone of a partner never stored, or a
// second one after the delete, is still DELETE_UNKNOWN_PARTNER.
//
// What keeps the positions uncommitted is real work, not a hook: the sandbox is frozen (a
// hung service) before a changed partner record is produced ahead of the tombstones in each
// of their partitions. Its lookup waits, so the commit cannot pass it, while the tombstones
// behind it, which need no lookup, are written.
import { existsSync, mkdtempSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kafka, KafkaMessage } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../deploy/local/processes.ts';
import { TopicReaders } from '../../src/kafka/topic-reader.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { cliEnv } from '../support/cli.ts';
import { committedAndEndOffsets, partnerEncoder, produce, readAll } from '../support/enrichment.ts';
import { kafkaClient } from '../support/kafka.ts';
import {
  committedRecords,
  killHard,
  metricsCounter,
  sandboxWithPartners,
  startCollected,
  topicsWithPartners,
  waitFor,
} from '../support/run-process.ts';
import { schemaRegistry } from '../support/schema-registry.ts';

const SEED = 23;
const PARTNERS = 300;
const DELETED = 5;

describe('at-least-once: tombstones read again after a kill', () => {
  const kafka: Kafka = kafkaClient();
  const registry = schemaRegistry();
  const scene = sandboxWithPartners(PARTNERS, SEED);

  /** Each partner's input partition, as the producer's partitioner chose it. */
  async function partitionsOf(topic: string): Promise<Map<string, number>> {
    const partitions = new Map<string, number>();
    await new TopicReaders(kafka).readToEnd(
      topic,
      (message, partition) => void partitions.set(message.key?.toString() ?? '', partition),
    );
    return partitions;
  }

  const header = (message: KafkaMessage, name: string) => message.headers?.[name]?.toString();

  /** Whether every partition file in `dir` has its checkpoint at the storage topic's end. */
  async function checkpointedToEnd(dir: string, storage: string, input: string): Promise<boolean> {
    const admin = kafka.admin();
    await admin.connect();
    const ends = await admin.fetchTopicOffsets(storage).finally(() => admin.disconnect());
    return ends.every(({ partition, high }) => {
      const file = join(dir, `${input.replace(/[^A-Za-z0-9._-]/g, '_')}-${partition}.sqlite`);
      if (!existsSync(file)) return false;
      const db = new DatabaseSync(file, { readOnly: true });
      try {
        const row = db.prepare('SELECT offset FROM checkpoint').get() as { offset: number } | undefined;
        return row !== undefined && row.offset >= Number(high);
      } finally {
        db.close();
      }
    });
  }

  it.each([
    ['the same disk (the partition files kept)', true],
    ['a fresh disk (restored from the storage topic)', false],
  ])(
    'regression: tombstones deleted before a kill -9 and not committed became DELETE_UNKNOWN_PARTNER dead letters when read again on %s',
    async (_disk, sameDisk) => {
      scene.sandbox.state.faults.reset();
      const run = await topicsWithPartners(kafka, registry, 'tomb-redelivery', scene.partners);
      scene.cleanups.push(run.cleanup);
      const stateDir = mkdtempSync(join(tmpdir(), 'tomb-redelivery-'));
      const metricsPort = await freePort();
      const start = () => {
        const running = startCollected(['run'], {
          ...cliEnv(scene.sandbox.url, run.topics, run.groupId),
          // Unset, every start gets an empty private directory of its own. Set, the files are
          // checkpointed often, so that the restart reads nothing of the storage topic: the
          // files alone know what the tombstones deleted.
          ...(sameDisk
            ? { PARTNER_ENRICH_STATE__DIR: stateDir, PARTNER_ENRICH_STATE__CHECKPOINT_INTERVAL_MS: '200' }
            : {}),
          PARTNER_ENRICH_OBSERVABILITY__LOG_LEVEL: 'info',
          PARTNER_ENRICH_OBSERVABILITY__METRICS_PORT: String(metricsPort),
        });
        scene.children.push(running);
        return running;
      };
      const committed = () => committedRecords(kafka, run.topics.input, run.groupId);

      const first = start();
      await waitFor(
        async () => (await committed()) >= PARTNERS,
        120_000,
        () => `every partner stored:\n${first.logs().slice(-3000)}`,
      );

      // Per partition of the deleted partners: a changed partner record whose lookup hangs,
      // then the tombstones; in the first of them, a tombstone of a partner never stored and a
      // second tombstone of a partner deleted just before.
      const partitionOf = await partitionsOf(run.topics.input);
      const deleted = scene.partners.slice(0, DELETED).map((p) => p.partnerId);
      const byPartition = Map.groupBy(deleted, (id) => partitionOf.get(id) as number);
      const encode = await partnerEncoder(registry, run.topics.input);
      const untouched = scene.partners.slice(DELETED);
      const messages = [];
      for (const [partition, ids] of byPartition) {
        const blocker = untouched.find((p) => partitionOf.get(p.partnerId) === partition) as PartnerRecord;
        const changed = { ...blocker, names: [`${blocker.names[0] ?? ''} Holding`] };
        messages.push({ key: blocker.partnerId, value: await encode(changed), partition });
        for (const id of ids) messages.push({ key: id, value: null, partition });
      }
      const [firstPartition, firstIds] = [...byPartition][0] as [number, string[]];
      messages.push(
        { key: 'NEVER-STORED', value: null, partition: firstPartition },
        { key: firstIds[0] as string, value: null, partition: firstPartition },
      );
      scene.sandbox.state.faults.update({ frozen: true });
      const before = await committedAndEndOffsets(kafka, run.groupId, run.topics.input);
      await produce(kafka, run.topics.input, messages);
      // The offsets the tombstones got: the end offsets before, counted on in produce order.
      const next = new Map([...byPartition.keys()].map((p) => [p, Number(before.end[p])]));
      const offsets = messages.map(({ partition }) => {
        const offset = next.get(partition) as number;
        next.set(partition, offset + 1);
        return offset;
      });
      const unknownOffsets = offsets.slice(-2).map((o) => `${firstPartition}@${o}`);

      const deletedEvents = async () =>
        (
          await Promise.all(
            (await readAll(kafka, run.topics.events)).map(
              async (m) => (await registry.decode(m.value as Buffer)) as { type: string; partnerId: string },
            ),
          )
        )
          .filter((e) => e.type === 'BusinessPartnerDeleted')
          .map((e) => e.partnerId);
      const unknownDeletes = async () =>
        (await readAll(kafka, run.topics.deadLetters))
          .filter((m) => header(m, 'pe.error.code') === 'DELETE_UNKNOWN_PARTNER')
          .map((m) => `${header(m, 'pe.origin.partition')}@${header(m, 'pe.origin.offset')}`);
      await waitFor(
        async () => new Set(await deletedEvents()).size === DELETED && (await unknownDeletes()).length === 2,
        60_000,
        () => `the deletes done and the unknown ones dead-lettered:\n${first.logs().slice(-3000)}`,
      );
      if (sameDisk)
        await waitFor(
          () => checkpointedToEnd(stateDir, run.topics.storage, run.topics.input),
          30_000,
          () => 'the partition files checkpointed at the end of the storage topic',
        );
      await killHard(first);
      // What makes the scenario: the tombstones' positions are not committed.
      expect(await committed()).toBe(PARTNERS);
      expect(await unknownDeletes()).toEqual(unknownOffsets);

      scene.sandbox.state.faults.update({ frozen: false });
      const second = start();
      await waitFor(
        async () => (await committed()) >= PARTNERS + messages.length,
        150_000,
        () => `every position committed:\n${second.logs().slice(-3000)}`,
      );
      const redelivered = await metricsCounter(metricsPort, 'records_redelivered_total');
      const restored = await metricsCounter(metricsPort, 'state_restore_records_total');
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);

      // Each tombstone of an unknown partner is dead-lettered by each run that read it; the
      // tombstones that deleted a partner never are.
      expect((await unknownDeletes()).sort()).toEqual([...unknownOffsets, ...unknownOffsets].sort());
      expect(new Set(await deletedEvents())).toEqual(new Set(deleted));
      // Finished as redeliveries; on the same disk with nothing read from the storage topic.
      expect(redelivered).toBe(DELETED);
      if (sameDisk) expect(restored).toBe(0);
      else expect(restored).toBeGreaterThan(PARTNERS);
    },
    300_000,
  );
});
