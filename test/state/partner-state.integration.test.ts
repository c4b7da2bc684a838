// Partner state per input partition, on the real broker and registry with the sandbox over
// HTTP: each replica holds (and restores) only the partitions it owns, a partition moved
// by a rebalance is restored before its records are processed, a restart on the same disk
// reads only the tail of the storage topic, and topics that are not co-partitioned are
// refused at start.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Config, ConfigInput } from '../../src/config/index.ts';
import { createKafkaEnrichment, type Enrichment } from '../../src/cli/enrichment.ts';
import { TopicReaders } from '../../src/kafka/topic-reader.ts';
import { createTopicsWithLeaders } from '../../src/kafka/topics.ts';
import { RunSummary } from '../../src/pipeline/run-summary.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import {
  committedAndEndOffsets,
  dropTopics,
  partnerEncoder,
  produce,
  readAll,
  testConfig,
  testTopics,
} from '../support/enrichment.ts';
import { eventually, kafkaClient } from '../support/kafka.ts';
import { scenario, type Scenario } from '../support/scenario.ts';

const stateDir = () => mkdtempSync(join(tmpdir(), 'partner-state-test-'));

function configFor(s: Scenario, overrides: ConfigInput = {}): Config {
  return testConfig(s.sandbox.url, s.topics, { batching: { maxTasks: 200, lingerMs: 50 }, ...overrides });
}

async function replica(config: Config, dir: string): Promise<Enrichment> {
  const enrichment = await createKafkaEnrichment(
    { ...config, state: { ...config.state, dir } },
    new RunSummary(),
  );
  await enrichment.pipeline.start();
  return enrichment;
}

async function untilCommittedToEnd(s: Scenario, config: Config): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { committed, end } = await committedAndEndOffsets(s.kafka, config.kafka.groupId, s.topics.input);
    if (JSON.stringify(committed) === JSON.stringify(end)) return;
    if (Date.now() > deadline) throw new Error('the group did not commit to the end of the input');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Partner ids per storage partition, newest value per key (tombstones drop the partner). */
async function storedPerPartition(s: Scenario): Promise<Map<number, Set<string>>> {
  const partitions = new Map<number, Set<string>>();
  await new TopicReaders(s.kafka).readToEnd(s.topics.storage, (message, partition) => {
    const ids = partitions.get(partition) ?? new Set<string>();
    const key = message.key?.toString() ?? '';
    if (message.value === null) ids.delete(key);
    else ids.add(key);
    partitions.set(partition, ids);
  });
  return partitions;
}

async function events(s: Scenario): Promise<{ type: string; partnerId: string }[]> {
  return Promise.all(
    (await readAll(s.kafka, s.topics.events)).map((m) => s.registry.decode(m.value as Buffer)),
  );
}

const changed = (partner: PartnerRecord): PartnerRecord => ({
  ...partner,
  names: [`${partner.names[0] ?? ''} Holding`, ...partner.names.slice(1)],
});

describe('partner state per input partition', () => {
  it('two replicas each restore and hold only the partitions they own (counted)', async () => {
    const s = await scenario('state-split', 600);
    const config = configFor(s);
    const first = await replica(config, stateDir());
    await untilCommittedToEnd(s, config);
    await first.stop(5_000);

    const [a, b] = [await replica(config, stateDir()), await replica(config, stateDir())];
    await eventually(
      () =>
        a.state.partitions.length + b.state.partitions.length === 3 &&
        a.state.partitions.length > 0 &&
        b.state.partitions.length > 0 &&
        a.pipeline.readiness().ready &&
        b.pipeline.readiness().ready,
      60_000,
      'both replicas ready, every partition held',
    );
    const stored = await storedPerPartition(s);
    for (const r of [a, b]) {
      const held = r.state.partitions.map((p) => p.partition);
      // Only its own partitions, each in full: as many partners as its storage partition has.
      expect(r.state.size).toBe(held.reduce((sum, p) => sum + (stored.get(p)?.size ?? 0), 0));
      const restored = new Set(r.state.restores.map((restore) => restore.partition.partition));
      expect(held.filter((p) => !restored.has(p))).toEqual([]);
    }
    const heldA = new Set(a.state.partitions.map((p) => p.partition));
    expect(b.state.partitions.filter((p) => heldA.has(p.partition))).toEqual([]);
    expect(a.state.size + b.state.size).toBe(s.partners.length);
    await Promise.all([a.stop(5_000), b.stop(5_000)]);
  });

  it('regression: a partition moved by a rebalance is restored before its records, so Updated not Created and unchanged re-sends not looked up (the state a replica loaded at its start missed what others wrote later)', async () => {
    const s = await scenario('state-move', 300);
    const config = configFor(s);
    // Two members share the first wave, each writing its partitions' state.
    const first = await replica(config, stateDir());
    const second = await replica(config, stateDir());
    await untilCommittedToEnd(s, config);
    // The first leaves: its partitions move to the second, whose disk never saw them.
    await first.stop(5_000);
    await eventually(() => second.state.partitions.length === 3, 60_000, 'every partition on the second');

    const paidBefore = s.sandbox.state.stats.snapshot().bulkTasks;
    const encode = await partnerEncoder(s.registry, s.topics.input);
    const updated = s.partners.slice(0, 100).map(changed);
    const unchanged = s.partners.slice(100, 200);
    await produce(
      s.kafka,
      s.topics.input,
      await Promise.all(
        [...updated, ...unchanged].map(async (p) => ({ key: p.partnerId, value: await encode(p) })),
      ),
    );
    await untilCommittedToEnd(s, config);
    await second.stop(5_000);

    // Every partner was Created once (by the first member); the changed ones Updated once
    // (by the second, from the state it restored), the unchanged ones got no event.
    const all = await events(s);
    const ofType = (type: string) => all.filter((e) => e.type === type).map((e) => e.partnerId);
    expect(ofType('BusinessPartnerCreated').sort()).toEqual(s.partners.map((p) => p.partnerId).sort());
    expect(ofType('BusinessPartnerUpdated').sort()).toEqual(updated.map((p) => p.partnerId).sort());
    // Only the changed partners were looked up again.
    expect(s.sandbox.state.stats.snapshot().bulkTasks - paidBefore).toBe(updated.length);
    expect(second.state.restores.reduce((sum, r) => sum + r.records, 0)).toBeGreaterThan(0);
  });

  it('a restart on the same disk reads only the tail of the storage topic (counted)', async () => {
    const s = await scenario('state-warm', 300);
    const config = configFor(s);
    const dir = stateDir();
    const first = await replica(config, dir);
    await untilCommittedToEnd(s, config);
    expect(first.state.restores.reduce((sum, r) => sum + r.records, 0)).toBe(0);
    await first.stop(5_000);

    // While it is away, another replica (another disk) processes 50 new partners.
    const other = await replica(config, stateDir());
    const encode = await partnerEncoder(s.registry, s.topics.input);
    const fresh = s.partners.slice(0, 50).map((p) => ({ ...p, partnerId: `${p.partnerId}-new` }));
    await produce(
      s.kafka,
      s.topics.input,
      await Promise.all(fresh.map(async (p) => ({ key: p.partnerId, value: await encode(p) }))),
    );
    await untilCommittedToEnd(s, config);
    expect(other.state.restores.reduce((sum, r) => sum + r.records, 0)).toBe(s.partners.length);
    await other.stop(5_000);

    const again = await replica(config, dir);
    await eventually(
      () => again.state.partitions.length === 3 && again.pipeline.readiness().ready,
      60_000,
      'ready',
    );
    expect(again.state.restores.reduce((sum, r) => sum + r.records, 0)).toBe(fresh.length);
    expect(again.state.size).toBe(s.partners.length + fresh.length);
    await again.stop(5_000);
  });

  it('refuses to start when the storage topic has a different partition count than the input topic', async () => {
    const kafka = kafkaClient();
    const topics = testTopics('state-copart');
    const admin = kafka.admin();
    await admin.connect();
    try {
      await createTopicsWithLeaders(admin, [
        { topic: topics.input, numPartitions: 3 },
        {
          topic: topics.storage,
          numPartitions: 1,
          configEntries: [{ name: 'cleanup.policy', value: 'compact' }],
        },
        ...[topics.matches, topics.events, topics.deadLetters].map((topic) => ({
          topic,
          numPartitions: 3,
        })),
        {
          topic: topics.state,
          numPartitions: 3,
          configEntries: [{ name: 'cleanup.policy', value: 'compact' }],
        },
      ]);
      const config = testConfig('http://127.0.0.1:9', topics);
      const start = createKafkaEnrichment(
        { ...config, state: { ...config.state, dir: stateDir() } },
        new RunSummary(),
      );
      await expect(start).rejects.toMatchObject({
        code: 'STATE_NOT_COPARTITIONED',
        message: expect.stringMatching(
          new RegExp(
            `storage topic ${topics.storage} has 1 partitions and input topic ${topics.input} has 3`,
          ),
        ),
      });
    } finally {
      await admin.disconnect();
      await dropTopics(kafka, topics);
    }
  });
});
