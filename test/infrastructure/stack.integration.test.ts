// The stack every later test builds on: a real broker and a real Confluent-compatible
// schema registry, driven by the libraries the product uses.
import { SchemaType } from '@kafkajs/confluent-schema-registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pipelineSchema } from '../../src/serde/schemas.ts';
import { eventually, kafkaClient, uniqueName, withTopics } from '../support/kafka.ts';
import { deleteSubject, schemaRegistry } from '../support/schema-registry.ts';

describe('Kafka and schema registry stack', () => {
  const topic = uniqueName('smoke-partners');
  const subject = `${topic}-value`;
  const kafka = kafkaClient();
  const registry = schemaRegistry();
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ cleanup } = await withTopics(kafka, [{ topic, numPartitions: 3 }]));
  });
  afterAll(async () => {
    await cleanup();
    await deleteSubject(subject);
  });

  it('round-trips Avro PartnerRecords registered from schemas/ through a consumer group', async () => {
    const schema = pipelineSchema('PartnerRecord');
    const { id } = await registry.register({ type: SchemaType.AVRO, schema: schema.text }, { subject });
    expect(await registry.getLatestSchemaId(subject)).toBe(id);

    const records = Array.from({ length: 30 }, (_, i) => ({
      partnerId: `P-${i}`,
      sourceSystem: 'ERP-EU',
      names: [`Muster ${i} GmbH`],
      legalForm: 'GmbH',
      addresses: [
        {
          street: 'Hauptstraße',
          houseNumber: `${i + 1}`,
          postCode: '10115',
          town: 'Berlin',
          region: 'BE',
          country: 'DE',
        },
      ],
      identifiers: [{ type: 'DE_HRB', value: `HRB ${1000 + i}`, country: 'DE' }],
      taxNumbers: [{ type: 'VAT', value: `DE${String(100000000 + i)}` }],
      changedAt: 1_700_000_000_000 + i,
    }));

    const producer = kafka.producer({ idempotent: true });
    await producer.connect();
    await producer.send({
      topic,
      messages: await Promise.all(
        records.map(async (r) => ({ key: r.partnerId, value: await registry.encode(id, r) })),
      ),
    });
    await producer.disconnect();

    const received = new Map<string, unknown>();
    const consumer = kafka.consumer({ groupId: uniqueName('smoke-group') });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        if (message.value) received.set(String(message.key), await registry.decode(message.value));
      },
    });
    await eventually(() => received.size === records.length, 60_000, 'all records consumed');
    await consumer.disconnect();

    for (const record of records) expect(received.get(record.partnerId)).toEqual(record);
  });
});
