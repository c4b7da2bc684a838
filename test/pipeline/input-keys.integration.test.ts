// The input's contract is a record keyed by its partner id: the key chooses the partition, and
// partner state is kept per partition. A record keyed by something else (no key: a producer's
// sticky partitioner, a Kafka Connect source without a key transform; another id of the
// upstream's) is enriched as any other, and `run` says so: a counter per kind of key and a
// warning naming an example, at once and then at most once a minute. A single-partition input
// cannot split a partner, so nothing is reported there.
import avro from 'avsc';
import type { Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../deploy/local/processes.ts';
import type { Config } from '../../src/config/index.ts';
import { cliEnv } from '../support/cli.ts';
import { createTopicsFor, partnerEncoder, produce, testTopics } from '../support/enrichment.ts';
import { kafkaClient, uniqueName } from '../support/kafka.ts';
import { committedRecords, sandboxWithPartners, startCollected, waitFor } from '../support/run-process.ts';
import { schemaRegistry } from '../support/schema-registry.ts';

const SEED = 41;
const PARTNERS = 30;
const WARNING = 'input records not keyed by their partner id';

/** A key as a Confluent Avro serializer writes a string: magic byte, schema id, the Avro string. */
const avroKey = (text: string) =>
  Buffer.concat([Buffer.from([0, 0, 0, 0, 7]), avro.Type.forSchema('string').toBuffer(text)]);

describe('input records not keyed by their partner id', () => {
  const kafka: Kafka = kafkaClient();
  const registry = schemaRegistry();
  const scene = sandboxWithPartners(PARTNERS, SEED);

  /** `run` over the partners, keyed as `keyOf` says, on an input of `partitions`; its counter per kind of key and its log. */
  async function enrich(partitions: number, keyOf: (partnerId: string, i: number) => string | Buffer | null) {
    const topics: Config['topics'] = { ...testTopics('input-keys'), partitions };
    scene.cleanups.push(await createTopicsFor(kafka, topics));
    const encode = await partnerEncoder(registry, topics.input);
    await produce(
      kafka,
      topics.input,
      await Promise.all(
        scene.partners.map(async (p, i) => ({ key: keyOf(p.partnerId, i), value: await encode(p) })),
      ),
    );
    const groupId = uniqueName('input-keys-group');
    const metricsPort = await freePort();
    const running = startCollected(['run'], {
      ...cliEnv(scene.sandbox.url, topics, groupId),
      PARTNER_ENRICH_OBSERVABILITY__LOG_LEVEL: 'info',
      PARTNER_ENRICH_OBSERVABILITY__METRICS_PORT: String(metricsPort),
    });
    scene.children.push(running);
    await waitFor(
      async () => (await committedRecords(kafka, topics.input, groupId)) >= PARTNERS,
      120_000,
      () => `every record committed:\n${running.logs().slice(-3000)}`,
    );
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const counted = (key: string) =>
      Number(
        new RegExp(`^partner_enrich_records_key_not_partner_id_total\\{key="${key}"\\} (\\d+)$`, 'm').exec(
          metrics,
        )?.[1] ?? 0,
      );
    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
    return { topics, missing: counted('missing'), other: counted('other'), logs: running.logs() };
  }

  it('regression: records without a key or keyed by another id on a multi-partition input went unreported; they are counted and logged', async () => {
    // 20 keyed by their partner id (one of them in Avro), 6 without a key, 4 by a CRM's id.
    const { topics, missing, other, logs } = await enrich(3, (partnerId, i) =>
      i < 19 ? partnerId : i === 19 ? avroKey(partnerId) : i < 26 ? null : `crm-${i}`,
    );
    expect({ missing, other }).toEqual({ missing: 6, other: 4 });
    const warnings = logs.split('\n').filter((line) => line.includes(WARNING));
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    const first = JSON.parse(warnings[0] as string) as { level: number; example: string };
    expect(first.level).toBe(40); // pino's warn
    expect(first.example).toMatch(new RegExp(`^${topics.input.replaceAll('.', '\\.')}\\[\\d\\]@\\d+`));
    // Within a minute of the first, the rest are only counted: one line, not one per record.
    expect(warnings).toHaveLength(1);
  });

  it('a single-partition input reports nothing: its records cannot be split', async () => {
    const { missing, other, logs } = await enrich(1, (_partnerId, i) => (i % 2 === 0 ? null : `crm-${i}`));
    expect({ missing, other }).toEqual({ missing: 0, other: 0 });
    expect(logs).not.toContain(WARNING);
  });
});
