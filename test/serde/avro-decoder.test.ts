// The Avro partner decoder on bodies that avsc alone would mishandle and on writer schemas the
// registry serves but the client cannot build, with the real client against a schema registry
// stand-in (registry-stand-in.ts).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import avro from 'avsc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ZERO_WIDTH_ITEMS } from '../../src/serde/block-counts.ts';
import { avroPartnerDecoder } from '../../src/serde/partner-decoders.ts';
import { pipelineSchema } from '../../src/serde/schemas.ts';
import {
  avroSchema,
  refusal,
  startRegistryStandIn,
  wire,
  type RegistryStandIn,
} from './registry-stand-in.ts';
import { INVALID_UTF8, patched } from './utf8-fixtures.ts';

const partnerType = pipelineSchema('PartnerRecord').type;
const long = (n: number) => avro.Type.forSchema('long').toBuffer(n);
const string = (s: string) => avro.Type.forSchema('string').toBuffer(s);
const partner = {
  partnerId: 'P1',
  sourceSystem: 'ERP',
  names: ['Acme GmbH'],
  legalForm: null,
  addresses: [],
  identifiers: [],
  taxNumbers: [],
  changedAt: 1,
};

/** The PartnerRecord schema with `extra` fields after its own, as a newer writer could have. */
const writerWith = (...extra: object[]) => {
  const schema = partnerType.schema() as { fields: object[] };
  return { ...schema, fields: [...schema.fields, ...extra] };
};

const PARTNER_ID = 1;
const WITH_NULLS_ID = 2;
const WITH_MAP_ID = 3;
const withNulls = writerWith(
  { name: 'flags', type: { type: 'array', items: 'null' } },
  {
    name: 'marks',
    type: {
      type: 'array',
      items: { type: 'record', name: 'Mark', fields: [{ name: 'none', type: 'null' }] },
    },
  },
);
const withMap = writerWith({ name: 'tags', type: { type: 'map', values: 'string' } });
const WITH_GRID_ID = 4;
const withGrid = writerWith({
  name: 'grid',
  type: {
    type: 'array',
    items: {
      type: 'array',
      items: {
        type: 'record',
        name: 'Cell',
        fields: [
          { name: 'blank', type: { type: 'fixed', name: 'Blank', size: 0 } },
          { name: 'none', type: 'null' },
        ],
      },
    },
  },
});
/** The reader's addresses as a writer may register them: records of a null, which take no bytes. */
const NULL_ADDRESSES_ID = 5;
const nullAddresses = (() => {
  const schema = partnerType.schema() as { fields: { name: string }[] };
  const addresses = {
    name: 'addresses',
    type: {
      type: 'array',
      items: { type: 'record', name: 'PartnerAddress', fields: [{ name: 'street', type: 'null' }] },
    },
  };
  return { ...schema, fields: schema.fields.map((f) => (f.name === 'addresses' ? addresses : f)) };
})();

let registry: RegistryStandIn;
beforeAll(async () => {
  registry = await startRegistryStandIn({
    [PARTNER_ID]: avroSchema(partnerType.schema()),
    [WITH_NULLS_ID]: avroSchema(withNulls),
    [WITH_MAP_ID]: avroSchema(withMap),
    [WITH_GRID_ID]: avroSchema(withGrid),
    [NULL_ADDRESSES_ID]: avroSchema(nullAddresses),
  });
});
afterAll(() => registry.close());

/** partnerId and sourceSystem, then the bytes that follow them. */
const partnerStart = (...rest: Buffer[]) => Buffer.concat([string('P1'), string('ERP'), ...rest]);
/** The rest of a PartnerRecord after its names: no legal form, no lists, changedAt 1. */
const partnerEnd = Buffer.concat([long(0), long(0), long(0), long(0), long(1)]);
/** A PartnerRecord without names, then the bytes of the writer's extra fields. */
const partnerWith = (...extra: Buffer[]) => partnerStart(long(0), partnerEnd, ...extra);

/**
 * The outcome of decoding `value` in a process of its own, with a small heap and a time limit:
 * a body that runs avsc out of memory or keeps it looping fails the test, not the test run.
 */
async function decodeAlone(value: Buffer): Promise<{ exit: number | string | null; stdout: string }> {
  const script = `
    import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
    import { avroPartnerDecoder } from ${JSON.stringify(new URL('../../src/serde/partner-decoders.ts', import.meta.url).href)};
    const decoder = avroPartnerDecoder(new SchemaRegistry({ host: process.env.REGISTRY }));
    await decoder.decode(Buffer.from(process.env.VALUE, 'hex')).then(
      () => console.log(JSON.stringify({ decoded: true })),
      (error) => console.log(JSON.stringify({ code: error.code, message: error.message })),
    );`;
  return promisify(execFile)(
    process.execPath,
    ['--max-old-space-size=64', '--input-type=module', '-e', script],
    { env: { ...process.env, REGISTRY: registry.url, VALUE: value.toString('hex') }, timeout: 10_000 },
  ).then(
    ({ stdout }) => ({ exit: 0, stdout }),
    (error: { code: number | null; signal: string | null; stdout: string }) => ({
      exit: error.code ?? error.signal,
      stdout: error.stdout,
    }),
  );
}

/** What decodeAlone() prints for a body refused as corrupt. */
const corrupt = (schemaId: number, reason: string) => ({
  exit: 0,
  stdout: `${JSON.stringify({ code: 'DECODE_CORRUPT_AVRO', message: `Avro body of schema id ${schemaId}: ${reason}` })}\n`,
});

describe('Avro partner decoder: array and map block counts', () => {
  it('regression: an array block count larger than the body made avsc allocate it and the process abort out of memory', async () => {
    // 16 bytes that say the names are 4x10^8 strings. In a process of its own with a small
    // heap: before the check, avsc filled an array of that length until the process aborted.
    const value = wire(PARTNER_ID, partnerStart(long(400_000_000)));
    expect(await decodeAlone(value)).toEqual(
      corrupt(PARTNER_ID, 'a block of 400000000 items in the 0 bytes left'),
    );
  });

  it.each([
    // avsc skips a field the reader does not have item by item: 2^40 turns of its loop (about
    // six minutes; the child process is stopped after 10 s).
    [
      '2^40 nulls in a field the reader skips: avsc looped for six minutes',
      WITH_NULLS_ID,
      partnerWith(long(2 ** 40), long(0), long(0)),
      2 ** 40,
    ],
    // The reader's addresses, each read as an object of six defaults, until the heap ran out.
    [
      '4x10^8 addresses written as records of a null: avsc ran out of memory',
      NULL_ADDRESSES_ID,
      partnerStart(long(0), long(0), long(400_000_000), long(0), long(0), long(0), long(1)),
      400_000_000,
    ],
  ])(
    'regression: items that take no bytes, exempt from the count check, were counted without limit: %s',
    async (_what, schemaId, body, count) => {
      expect(await decodeAlone(wire(schemaId, body))).toEqual(
        corrupt(
          schemaId,
          `a block of ${count} items that take no bytes, beyond the ${MAX_ZERO_WIDTH_ITEMS} a body may count in all`,
        ),
      );
    },
    20_000,
  );

  it.each([
    // Bodies of a few bytes: flags, then marks (an array of nulls, an array of records of a null).
    ['two blocks of one array', WITH_NULLS_ID, [long(6000), long(5000), long(0), long(0)], 5000],
    ['two arrays', WITH_NULLS_ID, [long(6000), long(0), long(5000), long(0)], 5000],
    [
      'a block of negative count (byte size 0)',
      WITH_NULLS_ID,
      [long(-10_001), long(0), long(0), long(0)],
      10_001,
    ],
    // grid: an array of two arrays of 6000 cells (a fixed of size 0 and a null).
    [
      'arrays in an array (records of a fixed of size 0 and a null)',
      WITH_GRID_ID,
      [long(2), long(6000), long(0), long(6000), long(0), long(0)],
      6000,
    ],
  ])(
    'refuses more than MAX_ZERO_WIDTH_ITEMS items that take no bytes in all of a body: %s',
    async (_what, schemaId, rest, count) => {
      await expect(
        avroPartnerDecoder(registry.client).decode(wire(schemaId, partnerWith(...rest))),
      ).rejects.toMatchObject({
        code: 'DECODE_CORRUPT_AVRO',
        message: `Avro body of schema id ${schemaId}: a block of ${count} items that take no bytes, beyond the ${MAX_ZERO_WIDTH_ITEMS} a body may count in all`,
      });
    },
  );

  it('decodes a body with MAX_ZERO_WIDTH_ITEMS items that take no bytes in all', async () => {
    const decoder = avroPartnerDecoder(registry.client);
    const half = MAX_ZERO_WIDTH_ITEMS / 2;
    const withNullsBody = partnerWith(long(half - 1), long(1), long(0), long(half), long(0));
    const noNames = { ...partner, names: [] };
    expect(await decoder.decode(wire(WITH_NULLS_ID, withNullsBody))).toEqual(noNames);
    const gridBody = partnerWith(long(2), long(half), long(0), long(half), long(0), long(0));
    expect(await decoder.decode(wire(WITH_GRID_ID, gridBody))).toEqual(noNames);
  });

  it.each([
    // Counts that avsc, without the check, survives: it would read them as empty strings and then find the end.
    ['a map in a field the reader skips', WITH_MAP_ID, [long(0), partnerEnd, long(1000)]],
    ['a block of negative count (items, then a byte size)', PARTNER_ID, [long(-1000), long(3)]],
  ])('refuses a block count larger than the body in %s', async (_what, schemaId, rest) => {
    const value = wire(schemaId, partnerStart(...rest));
    await expect(avroPartnerDecoder(registry.client).decode(value)).rejects.toMatchObject({
      code: 'DECODE_CORRUPT_AVRO',
      message: expect.stringContaining('a block of 1000 items in the '),
    });
  });

  it('decodes an array written in blocks of negative count (count, byte size, items), as avsc does', async () => {
    const names = Buffer.concat([string('Acme'), string('GmbH')]);
    const body = partnerStart(
      long(-2),
      long(names.length),
      names,
      long(1),
      string('AG'),
      long(0),
      partnerEnd,
    );
    expect((await avroPartnerDecoder(registry.client).decode(wire(PARTNER_ID, body))).names).toEqual([
      'Acme',
      'GmbH',
      'AG',
    ]);
  });

  it('refuses a block whose byte size is not that of its items', async () => {
    const names = Buffer.concat([string('Acme'), string('GmbH')]);
    const body = partnerStart(long(-2), long(names.length + 1), names, long(0), partnerEnd);
    await expect(avroPartnerDecoder(registry.client).decode(wire(PARTNER_ID, body))).rejects.toMatchObject({
      code: 'DECODE_CORRUPT_AVRO',
      message: expect.stringContaining('a block whose byte size is not that of its items'),
    });
  });

  it('does not refuse items that take no bytes (null, a record of nulls) for counting more than the bytes left', async () => {
    const writer = avro.Type.forSchema(withNulls as avro.Schema);
    const body = writer.toBuffer({
      ...partner,
      flags: [null, null, null, null, null],
      marks: [{ none: null }, { none: null }],
    });
    // The counts come last, with fewer bytes after them than they count.
    expect(body.subarray(-4)).toEqual(Buffer.concat([long(5), long(0), long(2), long(0)]));
    expect(await avroPartnerDecoder(registry.client).decode(wire(WITH_NULLS_ID, body))).toEqual(partner);
  });
});

describe('Avro partner decoder: writer schemas the registry serves', () => {
  const answers = {
    // What Confluent's JSON Schema serializer registers (draft 2020-12).
    7: {
      status: 200,
      body: {
        schemaType: 'JSON',
        schema: JSON.stringify({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' }),
      },
    },
    // An Avro default avsc refuses; the registry does not check defaults unless told to.
    8: avroSchema(writerWith({ name: 'note', type: 'string', default: null })),
    9: { status: 200, body: { schemaType: 'XML', schema: '<x/>' } },
    // A JSON Schema the client builds, which is no Avro writer schema.
    10: { status: 200, body: { schemaType: 'JSON', schema: JSON.stringify({ type: 'object' }) } },
    503: { status: 503, body: { error_code: 50302, message: 'Error while forwarding the request' } },
    429: { status: 429, body: { error_code: 429, message: 'Too many requests' } },
  };
  let served: RegistryStandIn;
  beforeAll(async () => {
    served = await startRegistryStandIn(answers);
  });
  afterAll(() => served.close());

  const value = (schemaId: number) => wire(schemaId, partnerType.toBuffer(partner));

  it('regression: a writer schema the registry serves but the client cannot build was SCHEMA_REGISTRY_UNAVAILABLE, retried forever', async () => {
    const decoder = avroPartnerDecoder(served.client);
    for (const [schemaId, reason] of [
      [7, 'no schema with key or ref "https://json-schema.org/draft/2020-12/schema"'],
      [8, 'incompatible field default null (invalid "string": null)'],
      [9, 'invalid schemaType'],
    ] as const) {
      const refusal = {
        code: 'DECODE_INCOMPATIBLE_SCHEMA',
        canRetry: false,
        message: `schema id ${schemaId}: ${reason}`,
        details: { schemaId },
      };
      await expect(decoder.decode(value(schemaId))).rejects.toMatchObject(refusal);
      // Refused once for good: the next records of that id are not asked for again.
      await expect(decoder.decode(value(schemaId))).rejects.toMatchObject(refusal);
      expect(() => decoder.decodeNow?.(value(schemaId))).toThrow(refusal.message);
      expect(served.asked.get(schemaId)).toBe(1);
    }
  });

  it('refuses a schema the client builds that is no Avro schema (DECODE_INCOMPATIBLE_SCHEMA)', async () => {
    await expect(avroPartnerDecoder(served.client).decode(value(10))).rejects.toMatchObject({
      code: 'DECODE_INCOMPATIBLE_SCHEMA',
      canRetry: false,
    });
  });

  it('waits for a registry that answers 5xx or 429, or cannot be reached (SCHEMA_REGISTRY_UNAVAILABLE)', async () => {
    const decoder = avroPartnerDecoder(served.client);
    for (const schemaId of [503, 429]) {
      await expect(decoder.decode(value(schemaId))).rejects.toMatchObject({
        code: 'SCHEMA_REGISTRY_UNAVAILABLE',
        canRetry: true,
      });
    }
    const gone = await startRegistryStandIn({});
    await gone.close();
    await expect(avroPartnerDecoder(gone.client).decode(value(7))).rejects.toMatchObject({
      code: 'SCHEMA_REGISTRY_UNAVAILABLE',
      canRetry: true,
      message: expect.stringContaining('ECONNREFUSED'),
    });
  });

  it('regression: a registry refusing the credentials (401, 403) was SCHEMA_REGISTRY_UNAVAILABLE, retried forever', async () => {
    for (const status of [401, 403] as const) {
      const refusing = await startRegistryStandIn({}, refusal(status));
      try {
        // Credentials in the registry's URL, as `schemaRegistry.url` may carry them.
        const { host, port } = new URL(refusing.url);
        const client = new SchemaRegistry({ host: `http://reg-user:s3cret@${host}` });
        const failure = await avroPartnerDecoder(client)
          .decode(value(7))
          .then(
            () => expect.fail('decoded'),
            (error: unknown) => error as Error,
          );
        expect(failure).toMatchObject({
          code: 'SCHEMA_REGISTRY_AUTH_FAILED',
          canRetry: false,
          details: { schemaId: 7, status },
        });
        expect(failure.message).toBe(
          `schema registry refused the credentials (HTTP ${status}) on GET ` +
            `http://reg-user:[redacted]@127.0.0.1:${port}/schemas/ids/7: ` +
            `Confluent_Schema_Registry - ${status === 401 ? 'Unauthorized' : 'Forbidden'}`,
        );
        expect(failure.message).not.toContain('s3cret');
      } finally {
        await refusing.close();
      }
    }
  });
});

describe('Avro partner decoder: strict UTF-8 of a writer schema with maps', () => {
  // A legal newer writer: an extra field whose union holds an array and a map of strings.
  const withAttributes = writerWith({
    name: 'attributes',
    type: ['null', { type: 'array', items: 'string' }, { type: 'map', values: 'string' }],
    default: null,
  });
  const withKind = writerWith({
    name: 'kind',
    type: { type: 'enum', name: 'Kind', symbols: ['A', 'B'] },
    default: 'A',
  });
  const writer = avro.Type.forSchema(withAttributes as avro.Schema);
  const kindWriter = avro.Type.forSchema(withKind as avro.Schema);
  const WITH_ATTRIBUTES_ID = 42;
  const WITH_KIND_ID = 43;
  let served: RegistryStandIn;
  beforeAll(async () => {
    served = await startRegistryStandIn({
      [WITH_ATTRIBUTES_ID]: avroSchema(withAttributes),
      [WITH_KIND_ID]: avroSchema(withKind),
    });
  });
  afterAll(() => served.close());

  const named = (name: string, attributes: unknown) =>
    writer.toBuffer({ ...partner, names: [name], attributes });

  it('regression: a genuine U+FFFD beside a union of an array and a map stopped the pipeline (an uncoded "duplicate union branch name")', async () => {
    const decoder = avroPartnerDecoder(served.client);
    for (const attributes of [null, ['x'], { k: 'v' }]) {
      const decoded = await decoder.decode(wire(WITH_ATTRIBUTES_ID, named('Caf\uFFFD Müller', attributes)));
      expect(decoded.names).toEqual(['Caf\uFFFD Müller']);
    }
    const body = patched(
      writer,
      { ...partner, names: ['Caf\uFFFD'], attributes: { 'k##': 'v' } },
      '##',
      INVALID_UTF8,
    );
    await expect(decoder.decode(wire(WITH_ATTRIBUTES_ID, body))).rejects.toMatchObject({
      code: 'DECODE_INVALID_UTF8',
      details: { schemaId: WITH_ATTRIBUTES_ID, path: 'attributes.entries.0.key' },
    });
  });

  it('regression: an error of the strict UTF-8 read escaped without a code', async () => {
    // An enum index out of range in a field the reader skips: only the strict read, which reads
    // the whole body with the writer schema, finds it.
    const body = kindWriter.toBuffer({ ...partner, names: ['Caf\uFFFD'], kind: 'A' });
    body[body.length - 1] = long(5)[0] as number;
    await expect(avroPartnerDecoder(served.client).decode(wire(WITH_KIND_ID, body))).rejects.toMatchObject({
      code: 'DECODE_CORRUPT_AVRO',
      message: `Avro body of schema id ${WITH_KIND_ID}, read with strings as bytes: invalid partnerenrich.v1.Kind enum index: 5`,
    });
  });
});
