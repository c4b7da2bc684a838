// Strict UTF-8 for decoded strings: invalid bytes are found where avsc would have
// written U+FFFD, and a genuine U+FFFD is left alone.
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { jsonPartnerDecoder } from '../../src/serde/partner-decoders.ts';
import { pipelineSchema } from '../../src/serde/schemas.ts';
import { invalidUtf8Path, replacementCharScan, stringsAsBytes } from '../../src/serde/utf8.ts';
import { avroPartnerWithName, INVALID_UTF8, patched } from './utf8-fixtures.ts';

const partnerType = pipelineSchema('PartnerRecord').type;
const hasReplacementChar = replacementCharScan(partnerType);

describe('strict UTF-8 of Avro strings', () => {
  it('finds the string whose bytes are not UTF-8 (read with strings as bytes)', () => {
    const body = avroPartnerWithName(INVALID_UTF8);
    // What avsc makes of it on its own: a U+FFFD that nobody wrote.
    const lenient = partnerType.fromBuffer(body) as { names: string[] };
    expect(lenient.names[0]).toContain('\uFFFD');
    expect(invalidUtf8Path(stringsAsBytes(partnerType).fromBuffer(body))).toBe('names.0');
  });

  it('accepts a genuine U+FFFD, which is valid UTF-8', () => {
    const body = avroPartnerWithName(Buffer.from('Muster\uFFFDGmbH'));
    expect(hasReplacementChar(partnerType.fromBuffer(body))).toBe(true);
    expect(invalidUtf8Path(stringsAsBytes(partnerType).fromBuffer(body))).toBeUndefined();
  });

  it('reads map keys as bytes too', () => {
    const type = avro.Type.forSchema({
      type: 'record',
      name: 'Tagged',
      fields: [{ name: 'tags', type: { type: 'map', values: 'string' } }],
    });
    const body = patched(type, { tags: { ok: 'fine', 'k##': 'v' } }, '##', INVALID_UTF8);
    expect(invalidUtf8Path(stringsAsBytes(type).fromBuffer(body))).toBe('tags.entries.1.key');
  });

  it('reads a writer schema whose types have the names of its map wrappers', () => {
    const type = avro.Type.forSchema({
      type: 'record',
      name: 'StrictUtf8Map1',
      fields: [
        { name: 'tags', type: { type: 'map', values: 'string' } },
        { name: 'entry', type: { type: 'record', name: 'StrictUtf8MapEntry1', fields: [] } },
      ],
    });
    const body = patched(type, { tags: { 'k##': 'v' }, entry: {} }, '##', INVALID_UTF8);
    expect(invalidUtf8Path(stringsAsBytes(type).fromBuffer(body))).toBe('tags.entries.0.key');
  });

  it('reads a writer schema with a union of string and bytes (that string branch stays unchecked)', () => {
    const type = avro.Type.forSchema({
      type: 'record',
      name: 'Either',
      fields: [
        { name: 'name', type: 'string' },
        { name: 'raw', type: [{ type: 'string' }, 'bytes'] },
      ],
    });
    const body = patched(type, { name: 'a##', raw: 'x' }, '##', INVALID_UTF8);
    expect(invalidUtf8Path(stringsAsBytes(type).fromBuffer(body))).toBe('name');
  });

  it('scans every string of a type for U+FFFD, in arrays, records, unions and maps', () => {
    const type = avro.Type.forSchema({
      type: 'record',
      name: 'Nested',
      fields: [
        { name: 'n', type: 'long' },
        { name: 'opt', type: ['null', 'string', 'long'] },
        {
          name: 'items',
          type: {
            type: 'array',
            items: { type: 'record', name: 'Item', fields: [{ name: 's', type: 'string' }] },
          },
        },
        { name: 'tags', type: { type: 'map', values: 'long' } },
      ],
    });
    const scan = replacementCharScan(type);
    const clean = { n: 1, opt: 2, items: [{ s: 'a' }], tags: { k: 1 } };
    expect(scan(clean)).toBe(false);
    expect(scan({ ...clean, opt: 'x\uFFFD' })).toBe(true);
    expect(scan({ ...clean, opt: null, items: [{ s: 'a' }, { s: '\uFFFD' }] })).toBe(true);
    expect(scan({ ...clean, tags: { '\uFFFD': 1 } })).toBe(true);
  });
});

describe('JSON partner decoder', () => {
  it('regression: invalid UTF-8 in a string field is a dead letter (DECODE_INVALID_UTF8), not U+FFFD looked up', async () => {
    const json = Buffer.concat([
      Buffer.from('{"partnerId":"P","sourceSystem":"S","names":["Muster'),
      INVALID_UTF8,
      Buffer.from('GmbH"],"changedAt":1}'),
    ]);
    await expect(jsonPartnerDecoder().decode(json)).rejects.toMatchObject({
      code: 'DECODE_INVALID_UTF8',
      canRetry: false,
    });
  });

  it('regression: a JSON string escaping a lone surrogate (\\ud800) was looked up and written to the storage topic as bytes that are not UTF-8; now DECODE_INVALID_UTF8 naming the field', async () => {
    const json = Buffer.from(
      '{"partnerId":"P","sourceSystem":"S","names":["Muster GmbH","Muster\\ud800GmbH"],"changedAt":1}',
    );
    await expect(jsonPartnerDecoder().decode(json)).rejects.toMatchObject({
      code: 'DECODE_INVALID_UTF8',
      details: { path: 'names.1' },
    });
  });

  it('decodes an escaped surrogate pair, which is one character', async () => {
    const json = Buffer.from(
      '{"partnerId":"P","sourceSystem":"S","names":["Rocket \\ud83d\\ude80"],"changedAt":1}',
    );
    expect((await jsonPartnerDecoder().decode(json)).names).toEqual(['Rocket 🚀']);
  });

  it('decodes a genuine U+FFFD', async () => {
    const json = Buffer.from(
      '{"partnerId":"P","sourceSystem":"S","names":["Muster\uFFFDGmbH"],"changedAt":1}',
    );
    expect((await jsonPartnerDecoder().decode(json)).names).toEqual(['Muster\uFFFDGmbH']);
  });
});
