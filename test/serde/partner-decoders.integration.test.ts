// The Avro partner decoder against the real schema registry: invalid UTF-8 in a string
// field is a dead letter, a genuine U+FFFD decodes; and against a registry that never answers.
import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { SchemaType } from '@kafkajs/confluent-schema-registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSchemaRegistry } from '../../src/cli/enrichment.ts';
import { avroPartnerDecoder, jsonPartnerDecoder } from '../../src/serde/partner-decoders.ts';
import { pipelineSchema } from '../../src/serde/schemas.ts';
import { partnerEncoder } from '../support/enrichment.ts';
import { uniqueName } from '../support/kafka.ts';
import { deleteSubject, registerWireSchema, schemaRegistry } from '../support/schema-registry.ts';
import { avroPartnerWithName, INVALID_UTF8 } from './utf8-fixtures.ts';

const registry = schemaRegistry();
const topic = uniqueName('decode-utf8');
let header: Buffer;

beforeAll(async () => {
  // The registry's own encoding gives the wire-format header with the registered schema id.
  const encode = await partnerEncoder(registry, topic);
  const wire = await encode({
    partnerId: 'P-1',
    sourceSystem: 'ERP',
    names: [],
    legalForm: null,
    addresses: [],
    identifiers: [],
    taxNumbers: [],
    changedAt: 1,
  });
  header = wire.subarray(0, 5);
});

afterAll(async () => {
  await deleteSubject(`${topic}-value`);
  await deleteSubject(`${topic}-nullable-value`);
  for (const suffix of ['namespaced', 'namespaced-nullable', 'renamed', 'json'])
    await deleteSubject(`${topic}-${suffix}-value`);
  for (const subject of [`${topic}-key`, `${topic}-record-key`]) await deleteSubject(subject);
});

/**
 * An upstream writer schema generated from nullable columns: the partner id and each
 * identifier's type a union with null, where the pipeline's reader requires a string.
 */
function nullableWriter(): object {
  const schema = JSON.parse(pipelineSchema('PartnerRecord').text) as {
    fields: { name: string; type: unknown }[];
  };
  for (const field of schema.fields) {
    if (field.name === 'partnerId') field.type = ['null', 'string'];
    if (field.name === 'identifiers') {
      const items = (field.type as { items: { fields: { name: string; type: unknown }[] } }).items;
      for (const inner of items.fields) if (inner.name === 'type') inner.type = ['null', 'string'];
    }
  }
  return schema;
}

/**
 * The pipeline's schema as a producer generates it in a namespace of its own (a Java package):
 * every named type, the nested records too, under that namespace.
 */
function namespacedWriter(
  namespace: string,
  schema: object = JSON.parse(pipelineSchema('PartnerRecord').text) as object,
): object {
  const text = JSON.stringify(schema);
  if (!text.includes('"partnerenrich.v1.')) throw new Error('the pipeline schema names its types otherwise');
  return JSON.parse(text.replaceAll('"partnerenrich.v1.', `"${namespace}.`)) as object;
}

describe('Avro partner decoder (real schema registry)', () => {
  it('regression: invalid UTF-8 in a string field is a dead letter (DECODE_INVALID_UTF8), not U+FFFD looked up', async () => {
    const value = Buffer.concat([header, avroPartnerWithName(INVALID_UTF8)]);
    await expect(avroPartnerDecoder(registry).decode(value)).rejects.toMatchObject({
      code: 'DECODE_INVALID_UTF8',
      canRetry: false,
      details: { path: 'names.0' },
    });
  });

  it('regression: a writer schema with a required field nullable was DECODE_INCOMPATIBLE_SCHEMA for every record; now each record decodes unless it carries the null (DECODE_INVALID_FIELDS naming the field)', async () => {
    const { id } = await registry.register(
      { type: SchemaType.AVRO, schema: JSON.stringify(nullableWriter()) },
      { subject: `${topic}-nullable-value` },
    );
    const partner = {
      partnerId: 'P-2',
      sourceSystem: 'ERP',
      names: ['Muster GmbH'],
      legalForm: null,
      addresses: [],
      identifiers: [{ type: 'LEI', value: '529900T8BM49AURSDO55', country: null }],
      taxNumbers: [],
      changedAt: 1,
    };
    const decoder = avroPartnerDecoder(registry);
    expect(await decoder.decode(await registry.encode(id, partner))).toEqual(partner);
    await expect(
      decoder.decode(await registry.encode(id, { ...partner, partnerId: null })),
    ).rejects.toMatchObject({
      code: 'DECODE_INVALID_FIELDS',
      canRetry: false,
      details: { paths: ['partnerId'] },
    });
    const untyped = { ...partner, identifiers: [{ type: null, value: 'X', country: null }] };
    await expect(decoder.decode(await registry.encode(id, untyped))).rejects.toMatchObject({
      code: 'DECODE_INVALID_FIELDS',
      details: { paths: ['identifiers.0.type'] },
    });
    // Decoded without waiting once the writer is known, the same way.
    expect(decoder.decodeNow?.(await registry.encode(id, partner))).toEqual(partner);
  });

  it('regression: a writer schema in the producer\'s own namespace (com.acme.crm.PartnerRecord and its nested records) was DECODE_INCOMPATIBLE_SCHEMA for every record (avsc: "no alias found"), though Avro resolves records by unqualified name and the registry\'s compatibility check accepts it; now it decodes, nullable fields too, and another record name is still refused', async () => {
    const partner = {
      partnerId: 'P-3',
      sourceSystem: 'ERP',
      names: ['Muster GmbH'],
      legalForm: null,
      addresses: [
        { street: 'Weg', houseNumber: '1', postCode: '10115', town: 'Berlin', region: null, country: 'DE' },
      ],
      identifiers: [{ type: 'LEI', value: '529900T8BM49AURSDO55', country: null }],
      taxNumbers: [{ type: 'DE_VAT_ID', value: 'DE123456789' }],
      changedAt: 1,
    };
    const register = async (schema: object, suffix: string) =>
      (
        await registry.register(
          { type: SchemaType.AVRO, schema: JSON.stringify(schema) },
          { subject: `${topic}-${suffix}-value` },
        )
      ).id;
    const decoder = avroPartnerDecoder(registry);
    const java = await register(namespacedWriter('com.acme.crm'), 'namespaced');
    expect(await decoder.decode(await registry.encode(java, partner))).toEqual(partner);
    expect(decoder.decodeNow?.(await registry.encode(java, partner))).toEqual(partner);
    const nullableJava = await register(
      namespacedWriter('com.acme.crm', nullableWriter()),
      'namespaced-nullable',
    );
    expect(await decoder.decode(await registry.encode(nullableJava, partner))).toEqual(partner);
    const renamed = await register(
      { ...namespacedWriter('com.acme.crm'), name: 'com.acme.crm.Customer' },
      'renamed',
    );
    await expect(decoder.decode(await registry.encode(renamed, partner))).rejects.toMatchObject({
      code: 'DECODE_INCOMPATIBLE_SCHEMA',
      details: { schemaId: renamed },
    });
  });

  it("reads JSON input the registry's JSON Schema serializer wrote (inputFormat: json)", async () => {
    const { id } = await registry.register(
      {
        type: SchemaType.JSON,
        schema: JSON.stringify({ type: 'object', properties: { partnerId: { type: 'string' } } }),
      },
      { subject: `${topic}-json-value` },
    );
    const partner = {
      partnerId: 'P-4',
      sourceSystem: 'CRM',
      names: ['Beispiel AG'],
      legalForm: 'AG',
      addresses: [],
      identifiers: [],
      taxNumbers: [],
      changedAt: 2,
    };
    const wire = await registry.encode(id, partner);
    expect(wire[0]).toBe(0);
    expect(await jsonPartnerDecoder().decode(wire)).toEqual(partner);
  });

  it('reads the partner id of a key an Avro key serializer wrote, a plain key as its text, and refuses a key of another Avro type', async () => {
    const stringKey = await registerWireSchema(`${topic}-key`, 'string');
    const recordKey = await registerWireSchema(`${topic}-record-key`, {
      type: 'record',
      name: 'PartnerKey',
      fields: [{ name: 'id', type: 'string' }],
    });
    const decoder = avroPartnerDecoder(registry);
    expect(decoder.decodeKeyNow?.(Buffer.from('P-7'))).toBe('P-7');
    const key = stringKey.encode('P-7');
    // Its schema not fetched yet: the pipeline awaits decodeKey, which fetches it once.
    expect(decoder.decodeKeyNow?.(key)).toBeUndefined();
    expect(await decoder.decodeKey?.(key)).toBe('P-7');
    expect(decoder.decodeKeyNow?.(stringKey.encode('P-8'))).toBe('P-8');
    const refused = { code: 'DECODE_KEY_NOT_PARTNER_ID', details: { schemaId: recordKey.id } };
    await expect(decoder.decodeKey?.(recordKey.encode({ id: 'P-7' }))).rejects.toMatchObject(refused);
    expect(() => decoder.decodeKeyNow?.(recordKey.encode({ id: 'P-7' }))).toThrow(
      expect.objectContaining(refused),
    );
    await expect(decoder.decodeKey?.(key.subarray(0, 6))).rejects.toMatchObject({
      code: 'DECODE_CORRUPT_AVRO',
    });
  });

  it('decodes a genuine U+FFFD', async () => {
    const value = Buffer.concat([header, avroPartnerWithName(Buffer.from('\uFFFD'))]);
    expect((await avroPartnerDecoder(registry).decode(value)).names).toEqual(['Muster\uFFFDGmbH']);
  });
});

describe('Avro partner decoder (a registry that takes connections and never answers)', () => {
  it('regression: a record whose schema id it asked such a registry for waited for good (measured: a SIGSTOPped registry, 59 records in flight for 65 s with /readyz 200, no pause, no log line); now SCHEMA_REGISTRY_UNAVAILABLE, which the pipeline waits out with the partition named in /readyz', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket)).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    try {
      const { port } = silent.address() as AddressInfo;
      const decoder = avroPartnerDecoder(createSchemaRegistry({ url: `http://127.0.0.1:${port}` }));
      const value = Buffer.concat([
        Buffer.from([0, 0, 0, 0x30, 0x39]),
        avroPartnerWithName(Buffer.from('x')),
      ]);
      await expect(decoder.decode(value)).rejects.toMatchObject({
        code: 'SCHEMA_REGISTRY_UNAVAILABLE',
        canRetry: true,
      });
      expect(sockets.length).toBeGreaterThan(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  }, 40_000);
});
