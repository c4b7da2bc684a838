import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMappingFile, parseMappingRules } from '../../src/mapping/mapping-file.ts';

const rules = {
  version: 1,
  fields: {
    partnerId: '$.id',
    sourceSystem: { const: 'CRM' },
    names: ['$.company.legalName', '$.company.tradeName'],
    legalForm: '$.company.form',
    changedAt: { path: '$.updatedAt', as: 'timestamp' },
    addresses: {
      each: '$.locations',
      fields: { street: '$.line1', postCode: '$.zip', town: '$.city', country: '$.cc' },
    },
    identifiers: { each: '$.registrations', fields: { type: '$.kind', value: '$.number' } },
  },
};

async function mappingFile(content: unknown): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'mapping-')), 'mapping.json');
  await writeFile(file, JSON.stringify(content));
  return file;
}

describe('mapping files', () => {
  it('turn another upstream shape into a PartnerRecord', async () => {
    const { decoder } = await loadMappingFile(await mappingFile(rules));
    const input = {
      id: 'C-9',
      company: { legalName: 'Acme Widgets', tradeName: 'Acme', form: 'Ltd' },
      updatedAt: '2026-01-02T03:04:05Z',
      locations: [{ line1: '1 High Street', zip: 'EC1A 1BB', city: 'London', cc: 'GB' }],
      registrations: [{ kind: 'GB_CRN', number: '01234567' }],
    };
    expect(await decoder.decode(Buffer.from(JSON.stringify(input)))).toEqual({
      partnerId: 'C-9',
      sourceSystem: 'CRM',
      names: ['Acme Widgets', 'Acme'],
      legalForm: 'Ltd',
      addresses: [
        {
          street: '1 High Street',
          houseNumber: null,
          postCode: 'EC1A 1BB',
          town: 'London',
          region: null,
          country: 'GB',
        },
      ],
      identifiers: [{ type: 'GB_CRN', value: '01234567', country: null }],
      taxNumbers: [],
      changedAt: Date.parse('2026-01-02T03:04:05Z'),
    });
  });

  it('are rejected at start when a rule is malformed, naming the rule', () => {
    const broken = { ...rules, fields: { ...rules.fields, partnerId: 'id-without-dollar' } };
    expect(() => parseMappingRules(JSON.stringify(broken), 'm.json')).toThrow(/fields\.partnerId/);
  });

  it('are rejected when a required rule is missing', () => {
    const { changedAt: _unused, ...fields } = rules.fields;
    expect(() => parseMappingRules(JSON.stringify({ version: 1, fields }), 'm.json')).toThrow(
      expect.objectContaining({ code: 'MAPPING_FILE_INVALID' }),
    );
  });

  it('regression: invalid UTF-8 in a string field is a dead letter (DECODE_INVALID_UTF8), not U+FFFD looked up', async () => {
    const { decoder } = await loadMappingFile(await mappingFile(rules));
    const input = Buffer.concat([
      Buffer.from('{"id":"C-9","company":{"legalName":"Acme'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"},"updatedAt":"2026-01-02T03:04:05Z"}'),
    ]);
    await expect(decoder.decode(input)).rejects.toMatchObject({ code: 'DECODE_INVALID_UTF8' });
  });

  it.each([
    ['an object', { region: 'EU', seq: 9 }],
    ['a list', ['EU', 9]],
  ])(
    'regression: %s read by a rule `as: string` became the text "[object Object]" (or the items joined), every such record one partner; now MAPPING_RULE_FAILED naming the path',
    async (_kind, id) => {
      const asString = { ...rules, fields: { ...rules.fields, partnerId: { path: '$.id', as: 'string' } } };
      const { decoder } = await loadMappingFile(await mappingFile(asString));
      const input = { id, company: { legalName: 'Acme' }, updatedAt: '2026-01-02T03:04:05Z' };
      await expect(decoder.decode(Buffer.from(JSON.stringify(input)))).rejects.toMatchObject({
        code: 'MAPPING_RULE_FAILED',
        details: { path: '$.id' },
      });
    },
  );

  const changedAt = async (updatedAt: unknown) => {
    const { decoder } = await loadMappingFile(await mappingFile(rules));
    const input = { id: 'C-9', company: { legalName: 'Acme' }, updatedAt };
    return (await decoder.decode(Buffer.from(JSON.stringify(input)))).changedAt;
  };

  it.each([
    ['a number', '1'],
    ['a day the month does not have', '2030-02-30T00:00:00Z'],
    ['a date-time without an offset, in the local time zone', '2030-01-31T02:00:00'],
    ['a month/day/year date', '12/31/2030'],
    ['prose', 'Tuesday 5 March 2030'],
    ['a time alone', '02:00:00Z'],
    ['a 61st second not at the end of a UTC day', '2030-01-31T02:00:60Z'],
    ['a fraction of a millisecond as a number', 1.5],
    ['a boolean', true],
  ])(
    'regression: %s read by a rule `as: timestamp` (%j) was taken through Date.parse ("1" as 2001-01-01, 2030-02-30 as March 2); now MAPPING_RULE_FAILED naming the path and value',
    async (_kind, value) => {
      const failure = changedAt(value);
      await expect(failure).rejects.toMatchObject({
        code: 'MAPPING_RULE_FAILED',
        details: { path: '$.updatedAt', value: JSON.stringify(value) },
      });
      await expect(failure).rejects.toThrow(`$.updatedAt is ${JSON.stringify(value)}, not a timestamp`);
    },
  );

  it.each([
    ['2030-01-31T02:00:00Z', Date.UTC(2030, 0, 31, 2)],
    ['2030-01-31t02:00:00.5z', Date.UTC(2030, 0, 31, 2, 0, 0, 500)],
    ['2030-01-31T02:00:00.123456789+01:00', Date.UTC(2030, 0, 31, 1, 0, 0, 123)],
    ['2030-01-31', Date.UTC(2030, 0, 31)],
    ['2028-02-29T00:00:00-05:30', Date.UTC(2028, 1, 29, 5, 30)],
    [1_700_000_000_000, 1_700_000_000_000],
  ])('read %j `as: timestamp` as %d epoch ms', async (value, millis) => {
    expect(await changedAt(value)).toBe(millis);
  });

  it.each([
    ['2016-12-31T23:59:60Z', Date.UTC(2017, 0, 1)],
    ['2016-12-31T18:59:60.5-05:00', Date.UTC(2017, 0, 1, 0, 0, 0, 500)],
    ['2017-01-01T00:59:60+01:00', Date.UTC(2017, 0, 1)],
  ])(
    'regression: a leap second read by a rule `as: timestamp` (%j) was MAPPING_RULE_FAILED, a valid record dead-lettered; now it is the next second, %d epoch ms',
    async (value, millis) => {
      expect(await changedAt(value)).toBe(millis);
    },
  );

  it('regression: JSON input starting with a UTF-8 byte order mark was MAPPING_RULE_FAILED "input is not JSON"; now it maps as without it', async () => {
    const { decoder } = await loadMappingFile(await mappingFile(rules));
    const input = Buffer.from(JSON.stringify({ id: 'C-9', company: { legalName: 'Acme' }, updatedAt: 5 }));
    expect(await decoder.decode(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), input]))).toEqual(
      await decoder.decode(input),
    );
  });

  it('read a number or a boolean `as: string` as its text', async () => {
    const asString = { ...rules, fields: { ...rules.fields, partnerId: { path: '$.id', as: 'string' } } };
    const { decoder } = await loadMappingFile(await mappingFile(asString));
    const input = { id: 12345, company: { legalName: 'Acme' }, updatedAt: '2026-01-02T03:04:05Z' };
    expect((await decoder.decode(Buffer.from(JSON.stringify(input)))).partnerId).toBe('12345');
  });

  it("regression: an integer id beyond 2^53 read `as: string` was rounded (9007199254740993 and ...992 one partner, one looked up under the other's name); now its digits as written", async () => {
    const asString = { ...rules, fields: { ...rules.fields, partnerId: { path: '$.id', as: 'string' } } };
    const { decoder } = await loadMappingFile(await mappingFile(asString));
    const record = (id: string) =>
      Buffer.from(`{"id": ${id}, "company": {"legalName": "Acme"}, "updatedAt": 5, "note": "${id}"}`);
    expect((await decoder.decode(record('9007199254740993'))).partnerId).toBe('9007199254740993');
    expect((await decoder.decode(record('9007199254740992'))).partnerId).toBe('9007199254740992');
    expect((await decoder.decode(record('-12345678901234567890'))).partnerId).toBe('-12345678901234567890');
  });

  it('regression: a value nested 200,000 deep where a rule reads overflowed the stack and failed the pipeline at that record; now it is a dead letter (MAPPING_RULE_FAILED)', async () => {
    const { decoder } = await loadMappingFile(await mappingFile(rules));
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    await expect(
      decoder.decode(Buffer.from(`{"id": "C-9", "company": {"legalName": ${deep}}, "updatedAt": 5}`)),
    ).rejects.toMatchObject({
      code: 'MAPPING_RULE_FAILED',
      message: expect.stringContaining('nested too deep'),
    });
  });

  it('regression: a mapping file saved with a byte order mark was refused as not JSON', () => {
    expect(parseMappingRules(`\uFEFF${JSON.stringify(rules)}`, 'm.json').fields.partnerId).toBe('$.id');
  });

  it('regression: a missing required rule was named "Invalid input"; now "missing"', () => {
    const { sourceSystem: _unused, ...fields } = rules.fields;
    expect(() => parseMappingRules(JSON.stringify({ version: 1, fields }), 'm.json')).toThrow(
      'm.json: fields.sourceSystem: missing',
    );
  });

  it('give a record whose mapped fields have the wrong type a decode error with the path', async () => {
    const { decoder } = await loadMappingFile(await mappingFile(rules));
    await expect(
      decoder.decode(Buffer.from(JSON.stringify({ company: {}, updatedAt: 5 }))),
    ).rejects.toMatchObject({
      code: 'DECODE_INVALID_FIELDS',
      details: { paths: ['partnerId'] },
    });
  });

  it.each([
    [
      'addresses',
      { each: '$.locations', fields: { street: '$.line1', zip: '$.zip' } },
      'fields.addresses.fields',
    ],
    [
      'identifiers',
      { each: '$.registrations', fields: { kind: '$.kind', value: '$.number' } },
      'fields.identifiers.fields',
    ],
    ['taxNumbers', { each: '$.taxes', fields: { type: '$.kind' } }, 'fields.taxNumbers.fields.value'],
  ])(
    'regression: a mapping file whose %s rule names a field the list item does not have (or lacks a required one) was accepted',
    (list, rule, where) => {
      const file = { ...rules, fields: { ...rules.fields, [list]: rule } };
      let refused: unknown;
      try {
        parseMappingRules(JSON.stringify(file), 'mapping.json');
      } catch (error) {
        refused = error;
      }
      expect(refused).toMatchObject({ code: 'MAPPING_FILE_INVALID' });
      expect((refused as Error).message).toContain(where);
    },
  );
});
