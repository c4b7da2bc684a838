// The Avro partner decoder against the real schema registry: invalid UTF-8 in a string
// field is a dead letter, a genuine U+FFFD decodes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { avroPartnerDecoder } from '../../src/serde/partner-decoders.ts';
import { partnerEncoder } from '../support/enrichment.ts';
import { uniqueName } from '../support/kafka.ts';
import { deleteSubject, schemaRegistry } from '../support/schema-registry.ts';
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

afterAll(() => deleteSubject(`${topic}-value`));

describe('Avro partner decoder (real schema registry)', () => {
  it('regression: invalid UTF-8 in a string field is a dead letter (DECODE_INVALID_UTF8), not U+FFFD looked up', async () => {
    const value = Buffer.concat([header, avroPartnerWithName(INVALID_UTF8)]);
    await expect(avroPartnerDecoder(registry).decode(value)).rejects.toMatchObject({
      code: 'DECODE_INVALID_UTF8',
      canRetry: false,
      details: { path: 'names.0' },
    });
  });

  it('decodes a genuine U+FFFD', async () => {
    const value = Buffer.concat([header, avroPartnerWithName(Buffer.from('\uFFFD'))]);
    expect((await avroPartnerDecoder(registry).decode(value)).names).toEqual(['Muster\uFFFDGmbH']);
  });
});
