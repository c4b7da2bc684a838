// Input whose keys a Confluent Avro key serializer wrote (Kafka Connect's AvroConverter as
// key.converter, a Java producer's KafkaAvroSerializer for keys): the wire format's magic
// byte and schema id, then the partner id as an Avro string.
import { afterAll, describe, expect, it } from 'vitest';
import { createKafkaEnrichment } from '../../src/cli/enrichment.ts';
import { RunSummary } from '../../src/pipeline/run-summary.ts';
import { generateDataset } from '../../src/sandbox/dataset/dataset.ts';
import { startSandbox } from '../../src/sandbox/index.ts';
import { upstreamPartners } from '../../src/sandbox/upstream-partners.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import {
  committedAtEnd,
  createTopicsFor,
  partnerEncoder,
  produce,
  readAll,
  testConfig,
  testTopics,
  waitForFinished,
} from '../support/enrichment.ts';
import { eventually, kafkaClient } from '../support/kafka.ts';
import { deleteSubject, registerWireSchema, schemaRegistry } from '../support/schema-registry.ts';

const SEED = 17;
const PARTNERS = 20;
const DELETED = 5;

describe('partner-enrich run on input with Avro-serialized keys', () => {
  const kafka = kafkaClient();
  const registry = schemaRegistry();
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('regression: a tombstone whose key an Avro key serializer wrote was dead-lettered DELETE_UNKNOWN_PARTNER (the key read as text names no partner); now it deletes the partner, and a key of another Avro type is a dead letter DECODE_KEY_NOT_PARTNER_ID', async () => {
    const sandbox = await startSandbox({ port: 0, orgs: 1_000, seed: SEED });
    const topics = testTopics('avro-keys');
    const dropTopics = await createTopicsFor(kafka, topics);
    const subjects = [`${topics.input}-key`, `${topics.input}-value`, `${topics.input}-other-key`];
    cleanups.push(
      dropTopics,
      () => sandbox.close(),
      async () => {
        for (const t of [topics.matches, topics.events, topics.storage]) subjects.push(`${t}-value`);
        for (const subject of subjects) await deleteSubject(subject);
      },
    );
    const partners = upstreamPartners(generateDataset({ organizations: 1_000, seed: SEED }), {
      count: PARTNERS,
      seed: SEED,
      invalid: 0,
      resent: 0,
      updated: 0,
    }).map(({ partner }) => partner as PartnerRecord);
    const encodeValue = await partnerEncoder(registry, topics.input);
    const stringKey = await registerWireSchema(`${topics.input}-key`, 'string');
    const recordKey = await registerWireSchema(`${topics.input}-other-key`, {
      type: 'record',
      name: 'PartnerKey',
      fields: [{ name: 'id', type: 'string' }],
    });
    const avroKey = (partnerId: string) => stringKey.encode(partnerId);
    await produce(
      kafka,
      topics.input,
      await Promise.all(
        partners.map(async (partner) => ({
          key: await avroKey(partner.partnerId),
          value: await encodeValue(partner),
        })),
      ),
    );
    const config = testConfig(sandbox.url, topics);
    const summary = new RunSummary();
    const enrichment = await createKafkaEnrichment(config, summary);
    await enrichment.pipeline.start();
    const deleted = partners.slice(0, DELETED).map((p) => p.partnerId);
    try {
      await waitForFinished(() => summary.finished, PARTNERS, 60_000);
      await produce(kafka, topics.input, [
        ...deleted.map((id) => ({ key: avroKey(id), value: null })),
        { key: recordKey.encode({ id: partners[DELETED]?.partnerId }), value: null },
      ]);
      await waitForFinished(() => summary.finished, PARTNERS + DELETED + 1, 60_000);
      await eventually(
        () => committedAtEnd(kafka, config.kafka.groupId, topics.input),
        20_000,
        'the committed positions at the end offsets',
      );
    } finally {
      await enrichment.stop(10_000);
    }
    const matches = await readAll(kafka, topics.matches);
    expect(
      matches
        .filter((m) => m.value !== null)
        .map((m) => m.key?.toString())
        .sort(),
    ).toEqual(partners.map((p) => p.partnerId).sort());
    // The deletes' outputs are keyed by the partner id's text, as every output is.
    expect(
      matches
        .filter((m) => m.value === null)
        .map((m) => m.key?.toString())
        .sort(),
    ).toEqual([...deleted].sort());
    const events = await Promise.all(
      (await readAll(kafka, topics.events)).map(
        async (m) => (await registry.decode(m.value as Buffer)) as { type: string; partnerId: string },
      ),
    );
    expect(
      events
        .filter((e) => e.type === 'BusinessPartnerDeleted')
        .map((e) => e.partnerId)
        .sort(),
    ).toEqual([...deleted].sort());
    const deadLetters = (await readAll(kafka, topics.deadLetters)).map((m) =>
      m.headers?.['pe.error.code']?.toString(),
    );
    expect(deadLetters).toEqual(['DECODE_KEY_NOT_PARTNER_ID']);
  });
});
