// One whole-pipeline scenario on the test broker: a sandbox, fresh topics, and distinct
// partners of the sandbox's dataset as Avro records on the input topic. Every scenario is
// cleaned up after its test (topics, subjects, the sandbox).
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { Kafka } from 'kafkajs';
import { afterEach } from 'vitest';
import type { Config } from '../../src/config/index.ts';
import { generateDataset } from '../../src/sandbox/dataset/dataset.ts';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../src/sandbox/index.ts';
import { upstreamPartners } from '../../src/sandbox/upstream-partners.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { createTopicsFor, partnerEncoder, produce, readAll, testTopics } from './enrichment.ts';
import { kafkaClient } from './kafka.ts';
import { deleteSubject, schemaRegistry } from './schema-registry.ts';

const SEED = 11;
const ORGS = 3_000;
const dataset = generateDataset({ organizations: ORGS, seed: SEED });

export interface Scenario {
  kafka: Kafka;
  registry: SchemaRegistry;
  sandbox: RunningSandbox;
  topics: Config['topics'];
  partners: PartnerRecord[];
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A sandbox, fresh topics and `count` distinct partners on the input topic. */
export async function scenario(
  name: string,
  count: number,
  sandboxOptions: SandboxOptions = {},
): Promise<Scenario> {
  const kafka = kafkaClient();
  const registry = schemaRegistry();
  const sandbox = await startSandbox({ port: 0, orgs: ORGS, seed: SEED, ...sandboxOptions });
  const topics = testTopics(name);
  const dropTopics = await createTopicsFor(kafka, topics);
  cleanups.push(async () => {
    await dropTopics();
    await sandbox.close();
    for (const t of [topics.input, topics.matches, topics.events, topics.storage])
      await deleteSubject(`${t}-value`);
  });
  const encode = await partnerEncoder(registry, topics.input);
  const partners = upstreamPartners(dataset, { count, seed: SEED, invalid: 0, resent: 0, updated: 0 }).map(
    (r) => r.partner as PartnerRecord,
  );
  await produce(
    kafka,
    topics.input,
    await Promise.all(partners.map(async (p) => ({ key: p.partnerId, value: await encode(p) }))),
  );
  return { kafka, registry, sandbox, topics, partners };
}

/** Every MatchResult the pipeline wrote, decoded. */
export async function matchResults(
  s: Scenario,
): Promise<{ partnerId: string; outcome: string; bulkId: string | null }[]> {
  return Promise.all(
    (await readAll(s.kafka, s.topics.matches)).map((m) => s.registry.decode(m.value as Buffer)),
  );
}
