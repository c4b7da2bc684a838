// The product end to end on real infrastructure: Avro partner records on a Kafka topic,
// the sandbox as the reference data service, every output read back from Kafka.
import { SchemaType } from '@kafkajs/confluent-schema-registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaEnrichment } from '../../src/cli/enrichment.ts';
import { WATCH_EVERY_MS } from '../../src/kafka/topic-watch.ts';
import { RunSummary } from '../../src/pipeline/run-summary.ts';
import { generateDataset } from '../../src/sandbox/dataset/dataset.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { upstreamPartners } from '../../src/sandbox/upstream-partners.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { pipelineSchema } from '../../src/serde/schemas.ts';
import {
  committedAndEndOffsets,
  createTopicsFor,
  partnerEncoder,
  produce,
  readAll,
  testConfig,
  testTopics,
  waitForFinished,
} from '../support/enrichment.ts';
import { kafkaClient, setTopicConfig, setTopicLimit } from '../support/kafka.ts';
import { deleteSubject, schemaRegistry } from '../support/schema-registry.ts';

const SEED = 7;
const VALID = 10_000;

const valid = (i: number): PartnerRecord => ({
  partnerId: `BAD-${i}`,
  sourceSystem: 'ERP',
  names: ['Planted Partner'],
  legalForm: 'GmbH',
  addresses: [
    { street: 'Weg', houseNumber: '1', postCode: '10115', town: 'Berlin', region: null, country: 'DE' },
  ],
  identifiers: [],
  taxNumbers: [],
  changedAt: 1,
});

/** A newer upstream schema version: one more field, with a default. */
const NEWER_WRITER = JSON.parse(pipelineSchema('PartnerRecord').text) as { fields: unknown[] };
NEWER_WRITER.fields.push({ name: 'website', type: ['null', 'string'], default: null });
/** An older upstream schema version: without tax numbers (the reader's default fills them). */
const OLDER_WRITER = JSON.parse(pipelineSchema('PartnerRecord').text) as { fields: { name: string }[] };
OLDER_WRITER.fields = OLDER_WRITER.fields.filter((f) => f.name !== 'taxNumbers');
/** An incompatible one: changedAt as a string. */
const INCOMPATIBLE_WRITER = JSON.parse(pipelineSchema('PartnerRecord').text) as {
  fields: { name: string; type: unknown }[];
};
INCOMPATIBLE_WRITER.fields = INCOMPATIBLE_WRITER.fields.map((f) =>
  f.name === 'changedAt' ? { ...f, type: 'string' } : f,
);

describe('partner-enrich run on Kafka', () => {
  const kafka = kafkaClient();
  const registry = schemaRegistry();
  const topics = testTopics('run');
  const extraSubjects = [
    `${topics.input}-newer-value`,
    `${topics.input}-older-value`,
    `${topics.input}-broken-value`,
  ];
  let sandbox: RunningSandbox;
  let dropTopics: () => Promise<void>;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, orgs: 5_000, seed: SEED });
    dropTopics = await createTopicsFor(kafka, topics);
  });
  afterAll(async () => {
    await dropTopics?.();
    await sandbox?.close();
    for (const subject of [
      ...extraSubjects,
      ...[topics.input, topics.matches, topics.events, topics.storage].map((t) => `${t}-value`),
    ]) {
      await deleteSubject(subject);
    }
  });

  it('enriches 10,000 Avro records: one MatchResult each, lifecycle events, dead letters with reasons, offsets committed to the end', async () => {
    const encode = await partnerEncoder(registry, topics.input);
    const register = async (subject: string, schema: unknown) =>
      (await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(schema) }, { subject })).id;
    const [newerId, olderId, brokenId] = [
      await register(extraSubjects[0] as string, NEWER_WRITER),
      await register(extraSubjects[1] as string, OLDER_WRITER),
      await register(extraSubjects[2] as string, INCOMPATIBLE_WRITER),
    ];
    const partners = upstreamPartners(generateDataset({ organizations: 5_000, seed: SEED }), {
      count: VALID,
      seed: SEED,
      invalid: 0,
      resent: 0,
      updated: 0,
    }).map((record) => record.partner as PartnerRecord);
    const messages = await Promise.all(
      partners.map(async (partner, i) => {
        // Every 50th record comes from an upstream on a newer, every 51st on an older schema version.
        if (i % 50 === 0)
          return {
            key: partner.partnerId,
            value: await registry.encode(newerId, { ...partner, website: 'https://example.org' }),
          };
        if (i % 51 === 0) {
          const { taxNumbers: _dropped, ...older } = partner;
          return { key: partner.partnerId, value: await registry.encode(olderId, older) };
        }
        return { key: partner.partnerId, value: await encode(partner) };
      }),
    );

    const avroBody = (p: PartnerRecord) => pipelineSchema('PartnerRecord').type.toBuffer(p);
    const wire = (schemaId: number, body: Buffer) => Buffer.concat([Buffer.from([0]), int32(schemaId), body]);
    const good = await encode(valid(0));
    const planted: { what: string; key: string; value: Buffer | null; code: string }[] = [
      { what: 'random bytes', key: 'B1', value: Buffer.from('not avro at all'), code: 'DECODE_NOT_AVRO' },
      { what: 'empty value', key: 'B2', value: Buffer.alloc(0), code: 'DECODE_NOT_AVRO' },
      {
        what: 'JSON instead of Avro',
        key: 'B3',
        value: Buffer.from(JSON.stringify(valid(3))),
        code: 'DECODE_NOT_AVRO',
      },
      {
        what: 'magic byte 1',
        key: 'B4',
        value: Buffer.concat([Buffer.from([1]), good.subarray(1)]),
        code: 'DECODE_NOT_AVRO',
      },
      {
        what: 'unknown schema id',
        key: 'B5',
        value: wire(987_654, avroBody(valid(5))),
        code: 'DECODE_UNKNOWN_SCHEMA_ID',
      },
      {
        what: 'truncated body',
        key: 'B6',
        value: good.subarray(0, good.length - 10),
        code: 'DECODE_CORRUPT_AVRO',
      },
      {
        what: 'trailing garbage',
        key: 'B7',
        value: Buffer.concat([good, Buffer.from([1, 2, 3])]),
        code: 'DECODE_CORRUPT_AVRO',
      },
      {
        what: 'incompatible writer schema',
        key: 'B8',
        value: wire(brokenId, Buffer.alloc(0)),
        code: 'DECODE_INCOMPATIBLE_SCHEMA',
      },
      { what: 'header only', key: 'B9', value: good.subarray(0, 5), code: 'DECODE_CORRUPT_AVRO' },
      {
        what: 'no name, no identifier',
        key: 'B10',
        value: await encode({ ...valid(10), names: [] }),
        code: 'MAPPING_NO_NAME_OR_IDENTIFIER',
      },
      {
        what: 'blank names only',
        key: 'B11',
        value: await encode({ ...valid(11), names: ['  ', ''] }),
        code: 'MAPPING_NO_NAME_OR_IDENTIFIER',
      },
      {
        what: 'unknown country',
        key: 'B12',
        value: await encode(withCountry(valid(12), 'XX')),
        code: 'MAPPING_INVALID_COUNTRY',
      },
      {
        what: 'country name',
        key: 'B13',
        value: await encode(withCountry(valid(13), 'Germany')),
        code: 'MAPPING_INVALID_COUNTRY',
      },
      {
        what: 'identifier country',
        key: 'B14',
        value: await encode({ ...valid(14), identifiers: [{ type: 'LEI', value: 'X', country: 'QQ' }] }),
        code: 'MAPPING_INVALID_COUNTRY',
      },
      {
        what: 'oversize name',
        key: 'B15',
        value: await encode({ ...valid(15), names: ['n'.repeat(5_000)] }),
        code: 'MAPPING_FIELD_TOO_LONG',
      },
      {
        what: 'oversize street',
        key: 'B16',
        value: await encode(withStreet(valid(16), 's'.repeat(300))),
        code: 'MAPPING_FIELD_TOO_LONG',
      },
      {
        what: 'oversize identifier',
        key: 'B17',
        value: await encode({
          ...valid(17),
          identifiers: [{ type: 'LEI', value: '9'.repeat(400), country: null }],
        }),
        code: 'MAPPING_FIELD_TOO_LONG',
      },
      {
        what: 'oversize legal form',
        key: 'B18',
        value: await encode({ ...valid(18), legalForm: 'L'.repeat(1_000) }),
        code: 'MAPPING_FIELD_TOO_LONG',
      },
      {
        // Not names: only the first is sent, and a record with 50 is looked up.
        what: 'too many identifiers',
        key: 'B19',
        value: await encode({
          ...valid(19),
          identifiers: Array.from({ length: 30 }, (_, i) => ({
            type: 'LEI',
            value: `LEI-${i}`,
            country: null,
          })),
        }),
        code: 'MAPPING_TOO_MANY_ITEMS',
      },
      {
        what: 'too many addresses',
        key: 'B20',
        value: await encode({ ...valid(20), addresses: Array(30).fill(valid(0).addresses[0]) }),
        code: 'MAPPING_TOO_MANY_ITEMS',
      },
      {
        what: 'empty partner id',
        key: 'B21',
        value: await encode({ ...valid(21), partnerId: '' }),
        code: 'MAPPING_MISSING_PARTNER_ID',
      },
      {
        what: 'oversize partner id',
        key: 'B22',
        value: await encode({ ...valid(22), partnerId: 'p'.repeat(500) }),
        code: 'MAPPING_FIELD_TOO_LONG',
      },
      { what: 'tombstone without key', key: '', value: null, code: 'MAPPING_MISSING_PARTNER_ID' },
    ];
    await produce(kafka, topics.input, [
      ...messages,
      ...planted.map((p) => ({ key: p.key === '' ? null : p.key, value: p.value })),
    ]);

    const config = testConfig(sandbox.url, topics);
    const summary = new RunSummary();
    const enrichment = await createKafkaEnrichment(config, summary);
    await enrichment.pipeline.start();
    await waitForFinished(() => summary.finished, VALID + planted.length);
    await enrichment.stop(10_000);

    const matches = await readAll(kafka, topics.matches);
    const results = await Promise.all(matches.map((m) => registry.decode(m.value as Buffer)));
    const perPartner = new Map<string, number>();
    for (const r of results) perPartner.set(r.partnerId, (perPartner.get(r.partnerId) ?? 0) + 1);
    expect(results).toHaveLength(VALID);
    expect([...perPartner.values()].every((n) => n === 1)).toBe(true);
    expect(new Set(partners.map((p) => p.partnerId))).toEqual(new Set(perPartner.keys()));
    const outcomes = Object.groupBy(results, (r: { outcome: string }) => r.outcome);
    expect(outcomes.MATCH?.length ?? 0).toBeGreaterThan(VALID * 0.6);
    expect(outcomes.FAILED).toBeUndefined();

    const events = await Promise.all(
      (await readAll(kafka, topics.events)).map((m) => registry.decode(m.value as Buffer)),
    );
    expect(events.filter((e) => e.type === 'BusinessPartnerCreated')).toHaveLength(VALID);
    const matched = results.filter((r) => r.outcome === 'MATCH');
    const createdSvcIds = new Map(events.map((e) => [e.partnerId, e.svcId]));
    for (const r of matched.slice(0, 100)) expect(createdSvcIds.get(r.partnerId)).toBe(r.bestCandidate.svcId);

    const deadLetters = await readAll(kafka, topics.deadLetters);
    expect(deadLetters).toHaveLength(planted.length);
    const byKey = new Map(deadLetters.map((m) => [m.key?.toString() ?? '', m]));
    for (const p of planted) {
      const letter = byKey.get(p.key);
      expect(letter?.headers?.['pe.error.code']?.toString(), p.what).toBe(p.code);
      expect(
        letter?.value?.equals(p.value ?? Buffer.alloc(0)) ?? p.value === null,
        `${p.what} keeps its bytes`,
      ).toBe(true);
      expect(letter?.headers?.['pe.origin.topic']?.toString()).toBe(topics.input);
    }

    const { committed, end } = await committedAndEndOffsets(kafka, config.kafka.groupId, topics.input);
    expect(committed).toEqual(end);
  });
});

function int32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32BE(value);
  return buffer;
}

function withCountry(partner: PartnerRecord, country: string): PartnerRecord {
  return { ...partner, addresses: partner.addresses.map((a) => ({ ...a, country })) };
}

function withStreet(partner: PartnerRecord, street: string): PartnerRecord {
  return { ...partner, addresses: partner.addresses.map((a) => ({ ...a, street })) };
}

describe('partner-enrich run on Kafka with a storage topic smaller than some partner records', () => {
  const kafka = kafkaClient();
  /** The storage topic's max.message.bytes: a record of 80 KB can never be stored, one of 40 KB can. */
  const STORAGE_LIMIT = 64 * 1024;
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  /** A sandbox, and the pipeline's topics with the storage topic at STORAGE_LIMIT. */
  async function smallStorage(prefix: string) {
    const sandbox = await startSandbox({ port: 0, orgs: 200, seed: SEED });
    const topics = testTopics(prefix);
    const dropTopics = await createTopicsFor(kafka, topics);
    cleanups.push(
      dropTopics,
      () => sandbox.close(),
      async () => {
        for (const t of [topics.input, topics.matches, topics.events, topics.storage])
          await deleteSubject(`${t}-value`);
      },
    );
    await setTopicLimit(kafka, topics.storage, STORAGE_LIMIT);
    const encode = await partnerEncoder(schemaRegistry(), topics.input);
    return { sandbox, topics, encode };
  }

  it.each(['at-least-once', 'exactly-once'] as const)(
    'regression (%s): a record whose storage record can never fit is dead-lettered before its lookup, no task paid for it',
    async (delivery) => {
      const { sandbox, topics, encode } = await smallStorage('oversize');
      const partners = [
        ...[1, 2, 3].map((i) => valid(i)),
        { ...valid(4), sourceSystem: 'S'.repeat(40_000) },
        { ...valid(5), sourceSystem: 'S'.repeat(80_000) },
      ];
      const values = await Promise.all(partners.map((p) => encode(p)));
      await produce(
        kafka,
        topics.input,
        partners.map((p, i) => ({ key: p.partnerId, value: values[i] as Buffer })),
      );

      const config = testConfig(sandbox.url, topics, { delivery });
      const summary = new RunSummary();
      const enrichment = await createKafkaEnrichment(config, summary);
      await enrichment.pipeline.start();
      await waitForFinished(() => summary.finished, partners.length);
      await enrichment.stop(10_000);

      const results = await readAll(kafka, topics.matches);
      const matched = await Promise.all(results.map((m) => schemaRegistry().decode(m.value as Buffer)));
      expect(matched.map((r) => r.partnerId).sort()).toEqual(['BAD-1', 'BAD-2', 'BAD-3', 'BAD-4']);
      const [letter, ...more] = await readAll(kafka, topics.deadLetters);
      expect(more).toHaveLength(0);
      expect(letter?.key?.toString()).toBe('BAD-5');
      expect(letter?.headers?.['pe.stage']?.toString()).toBe('output');
      expect(letter?.headers?.['pe.error.code']?.toString()).toBe('OUTPUT_TOO_LARGE');
      expect(letter?.headers?.['pe.error.message']?.toString()).toContain(topics.storage);
      expect(letter?.value?.equals(values[4] as Buffer)).toBe(true);
      // The service was asked for the four records that have outputs, not for the fifth.
      expect(sandbox.state.stats.snapshot().bulkTasks).toBe(4);
      const { committed, end } = await committedAndEndOffsets(kafka, config.kafka.groupId, topics.input);
      expect(committed).toEqual(end);
    },
  );

  it("regression: a storage topic's limit raised while `run` runs was not seen until a restart (the dead letter OUTPUT_TOO_LARGE replayed was dead-lettered again): within WATCH_EVERY_MS the replay is looked up and stored", async () => {
    const { sandbox, topics, encode } = await smallStorage('raised');
    const large = await encode({ ...valid(5), sourceSystem: 'S'.repeat(80_000) });
    await produce(kafka, topics.input, [{ key: 'BAD-5', value: large }]);

    const summary = new RunSummary();
    const enrichment = await createKafkaEnrichment(testConfig(sandbox.url, topics), summary);
    await enrichment.pipeline.start();
    await waitForFinished(() => summary.finished, 1);
    const [letter] = await readAll(kafka, topics.deadLetters);
    expect(letter?.headers?.['pe.error.code']?.toString()).toBe('OUTPUT_TOO_LARGE');

    await setTopicLimit(kafka, topics.storage, 1024 * 1024);
    // The next read of the limits comes within the period (plus the read, milliseconds).
    await new Promise((resolve) => setTimeout(resolve, WATCH_EVERY_MS + 1_000));
    // What `dlq replay` publishes: the dead letter's key and bytes.
    await produce(kafka, topics.input, [{ key: 'BAD-5', value: letter?.value as Buffer }]);
    await waitForFinished(() => summary.finished, 2);
    await enrichment.stop(10_000);

    expect(await readAll(kafka, topics.deadLetters)).toHaveLength(1);
    const results = await readAll(kafka, topics.matches);
    const matched = await Promise.all(results.map((m) => schemaRegistry().decode(m.value as Buffer)));
    expect(matched.map((r) => r.partnerId)).toEqual(['BAD-5']);
    expect(sandbox.state.stats.snapshot().bulkTasks).toBe(1);
  });
});

describe('partner-enrich run on Kafka with a dead-letter topic smaller than some input records', () => {
  const kafka = kafkaClient();
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it.each(['at-least-once', 'exactly-once'] as const)(
    "regression (%s): a dead letter whose record's bytes do not fit the topic keeps its own reason, without the bytes (it became OUTPUT_TOO_LARGE)",
    async (delivery) => {
      const sandbox = await startSandbox({ port: 0, orgs: 200, seed: SEED });
      const topics = testTopics('dl-oversize');
      const dropTopics = await createTopicsFor(kafka, topics);
      cleanups.push(dropTopics, () => sandbox.close());
      await setTopicLimit(kafka, topics.deadLetters, 64 * 1024);
      const notAvro = Buffer.alloc(80_000, 0x41);
      await produce(kafka, topics.input, [{ key: 'BIG-1', value: notAvro }]);

      const config = testConfig(sandbox.url, topics, { delivery });
      const summary = new RunSummary();
      const enrichment = await createKafkaEnrichment(config, summary);
      await enrichment.pipeline.start();
      await waitForFinished(() => summary.finished, 1);
      await enrichment.stop(10_000);

      const [letter, ...more] = await readAll(kafka, topics.deadLetters);
      expect(more).toHaveLength(0);
      expect(letter?.key?.toString()).toBe('BIG-1');
      expect(letter?.headers?.['pe.stage']?.toString()).toBe('decode');
      expect(letter?.headers?.['pe.error.code']?.toString()).toBe('DECODE_NOT_AVRO');
      expect(letter?.headers?.['pe.value-dropped']?.toString()).toBe('80000');
      expect(letter?.value?.length ?? 0).toBe(0);
      const { committed, end } = await committedAndEndOffsets(kafka, config.kafka.groupId, topics.input);
      const written = Object.entries(end).filter(([, high]) => high !== '0');
      expect(written.map(([partition]) => committed[Number(partition)])).toEqual(
        written.map(([, high]) => high),
      );
    },
  );
});

/** One upstream partner of the sandbox's dataset (`seed` picks which) under the partner id `partnerId`. */
const onePartner = (partnerId: string, seed: number): PartnerRecord => {
  const [record] = upstreamPartners(generateDataset({ organizations: 1_000, seed: SEED }), {
    count: 1,
    seed,
    invalid: 0,
    resent: 0,
    updated: 0,
  });
  return { ...(record?.partner as PartnerRecord), partnerId };
};

describe('partner-enrich run on Kafka with JSON input', () => {
  const kafka = kafkaClient();
  const topics = testTopics('json');
  let sandbox: RunningSandbox;
  let dropTopics: () => Promise<void>;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, orgs: 1_000, seed: SEED });
    dropTopics = await createTopicsFor(kafka, topics);
  });
  afterAll(async () => {
    await dropTopics?.();
    await sandbox?.close();
    for (const t of [topics.matches, topics.events, topics.storage]) await deleteSubject(`${t}-value`);
  });

  it('reads PartnerRecord JSON values (inputFormat: json) and dead-letters JSON that does not fit', async () => {
    const partners = upstreamPartners(generateDataset({ organizations: 1_000, seed: SEED }), {
      count: 200,
      seed: SEED,
      invalid: 0,
      resent: 0,
      updated: 0,
    }).map((record) => record.partner as PartnerRecord);
    await produce(kafka, topics.input, [
      ...partners.map((p) => ({ key: p.partnerId, value: Buffer.from(JSON.stringify(p)) })),
      { key: 'J-BAD', value: Buffer.from('{"partnerId": 42}') },
    ]);
    const config = testConfig(sandbox.url, topics, { inputFormat: 'json' });
    const summary = new RunSummary();
    const enrichment = await createKafkaEnrichment(config, summary);
    await enrichment.pipeline.start();
    await waitForFinished(() => summary.finished, partners.length + 1);
    await enrichment.stop(10_000);

    expect(await readAll(kafka, topics.matches)).toHaveLength(partners.length);
    const [deadLetter] = await readAll(kafka, topics.deadLetters);
    expect(deadLetter?.headers?.['pe.error.code']?.toString()).toBe('DECODE_INVALID_FIELDS');
    expect(summary.outcomes.get('MATCH')).toBeGreaterThan(partners.length / 2);
  });

  /** Runs the pipeline on the JSON input until `count` records are finished, then stops it. */
  async function runUntilFinished(count: number): Promise<void> {
    const summary = new RunSummary();
    const enrichment = await createKafkaEnrichment(
      testConfig(sandbox.url, topics, { inputFormat: 'json' }),
      summary,
    );
    await enrichment.pipeline.start();
    await waitForFinished(() => summary.finished, count);
    await enrichment.stop(10_000);
  }

  const messagesOf = async (topic: string, partnerId: string) =>
    (await readAll(kafka, topic)).filter((m) => m.key?.toString() === partnerId);

  it('regression: a JSON value starting with a UTF-8 byte order mark was dead-lettered DECODE_NOT_JSON (the invisible mark in its message); now it is read as without it', async () => {
    const partner = onePartner('J-BOM', SEED + 1);
    const json = Buffer.from(JSON.stringify(partner));
    await produce(kafka, topics.input, [
      { key: 'J-BOM', value: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json]) },
    ]);
    await runUntilFinished(1);

    expect(await messagesOf(topics.deadLetters, 'J-BOM')).toEqual([]);
    expect(await messagesOf(topics.matches, 'J-BOM')).toHaveLength(1);
    expect(await messagesOf(topics.storage, 'J-BOM')).toHaveLength(1);
  });

  it('regression: an input record whose timestamp is in nanoseconds (past 2^53) made a storage record Avro cannot encode, and the pipeline failed on it at every restart; now its timestamp counts as none', async () => {
    const partner = onePartner('J-NANOS', SEED + 2);
    // Kafka 4 refuses timestamps an hour ahead unless the topic allows them; 3.9 takes any.
    await setTopicConfig(kafka, topics.input, 'message.timestamp.after.max.ms', String(2n ** 63n - 1n));
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({
      topic: topics.input,
      acks: -1,
      messages: [
        { key: 'J-NANOS', value: Buffer.from(JSON.stringify(partner)), timestamp: '1700000000000000000' },
      ],
    });
    await producer.disconnect();
    await runUntilFinished(1);

    expect(await messagesOf(topics.matches, 'J-NANOS')).toHaveLength(1);
    expect(await messagesOf(topics.storage, 'J-NANOS')).toHaveLength(1);
  });
});
