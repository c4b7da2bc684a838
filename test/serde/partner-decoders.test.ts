import { describe, expect, it } from 'vitest';
import { jsonPartnerDecoder } from '../../src/serde/partner-decoders.ts';
import { pipelineSchema } from '../../src/serde/schemas.ts';

const decode = (text: string) => jsonPartnerDecoder().decode(Buffer.from(text));

describe('JSON partner decoder', () => {
  it('fills the Avro schema defaults for missing optional fields', async () => {
    expect(await decode('{"partnerId":"P","sourceSystem":"S","changedAt":1}')).toEqual({
      partnerId: 'P',
      sourceSystem: 'S',
      names: [],
      legalForm: null,
      addresses: [],
      identifiers: [],
      taxNumbers: [],
      changedAt: 1,
    });
  });

  it.each([
    ['not JSON', '{oops', 'DECODE_NOT_JSON'],
    ['a JSON array', '[1,2]', 'DECODE_NOT_JSON'],
    ['a wrong type', '{"partnerId":"P","sourceSystem":"S","changedAt":"yesterday"}', 'DECODE_INVALID_FIELDS'],
    ['a missing required field', '{"sourceSystem":"S","changedAt":1}', 'DECODE_INVALID_FIELDS'],
  ])('rejects %s', async (_what, text, code) => {
    await expect(decode(text)).rejects.toMatchObject({ code });
  });

  it("regression: JSON behind the wire header of Confluent's JSON Schema serializer (magic byte 0, a 4-byte schema id) was DECODE_NOT_JSON for every record; now its text is read, and a value of the header alone is still refused", async () => {
    const header = Buffer.from([0, 0, 0, 0, 42]);
    const text = '{"partnerId":"P","sourceSystem":"S","changedAt":1}';
    expect(await jsonPartnerDecoder().decode(Buffer.concat([header, Buffer.from(text)]))).toEqual(
      await decode(text),
    );
    await expect(jsonPartnerDecoder().decode(header)).rejects.toMatchObject({ code: 'DECODE_NOT_JSON' });
  });

  it('regression: a record with an escaped surrogate and a field nested 100,000 deep overflowed the call stack (RangeError, no code: the pipeline failed on it at every restart); now it is decoded, and a lone surrogate that deep is DECODE_INVALID_UTF8 with its path', async () => {
    const depth = 100_000;
    const nested = (inner: string) => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
    const record = (name: string, inner: string) =>
      `{"partnerId":"P","sourceSystem":"S","changedAt":1,"names":[${name}],"x":${nested(inner)}}`;
    await expect(decode(record('"Caf\\ud83d\\ude00"', '1'))).resolves.toMatchObject({
      partnerId: 'P',
      names: ['Caf\u{1F600}'],
    });
    const refused = await decode(record('"Caf\\ud83d\\ude00"', '"\\ud800"')).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'DECODE_INVALID_UTF8' });
    expect((refused as { details: { path: string } }).details.path).toBe(
      ['x', ...Array(depth).fill('0')].join('.'),
    );
  });

  it('lists every invalid field path', async () => {
    await expect(
      decode('{"partnerId":1,"sourceSystem":"S","names":["a",2],"changedAt":1}'),
    ).rejects.toMatchObject({
      details: { paths: ['partnerId', 'names.1'] },
    });
  });
});

describe('Avro schemas', () => {
  it('encode a PartnerRecord to the saved reference bytes', () => {
    const record = {
      partnerId: 'P-1',
      sourceSystem: 'ERP',
      names: ['Muster GmbH'],
      legalForm: 'GmbH',
      addresses: [
        {
          street: 'Hauptstraße',
          houseNumber: '1',
          postCode: '10115',
          town: 'Berlin',
          region: null,
          country: 'DE',
        },
      ],
      identifiers: [{ type: 'DE_HRB', value: 'HRB 1', country: 'DE' }],
      taxNumbers: [],
      changedAt: 1_700_000_000_000,
    };
    const bytes = pipelineSchema('PartnerRecord').type.toBuffer(record);
    // Reference bytes: a change here breaks every consumer of the topic; it needs a new schema version.
    expect(bytes.toString('hex')).toBe(REFERENCE_PARTNER_RECORD_HEX);
  });
});

const REFERENCE_PARTNER_RECORD_HEX =
  '06502d310645525002164d757374657220476d6248000208476d6248020218486175707473747261c39f65020231020a3130313135020c4265726c696e000204444500020c44455f4852420a485242203102044445000080a0abfef962';
