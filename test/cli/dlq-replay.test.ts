// Which dead letters `dlq replay` takes.
import avro from 'avsc';
import type { KafkaMessage } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { bytesDropped, deadLetterFilter } from '../../src/cli/commands/dlq-replay.ts';

const letter = (headers: Record<string, string>, value = Buffer.from('{}')): KafkaMessage => ({
  key: Buffer.from('P-1'),
  value,
  timestamp: '0',
  attributes: 0,
  offset: '0',
  headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Buffer.from(v)])),
});

describe('dlq replay filter', () => {
  it('leaves out dead letters whose original bytes were dropped: replaying them would publish an empty value', () => {
    const take = deadLetterFilter({ code: 'OUTPUT_TOO_LARGE' });
    const kept = letter({ 'pe.error.code': 'OUTPUT_TOO_LARGE' });
    const dropped = letter(
      { 'pe.error.code': 'OUTPUT_TOO_LARGE', 'pe.value-dropped': '2000000' },
      Buffer.alloc(0),
    );
    // The filter takes both, to count the one left out; its bytes are not there to replay.
    expect([take(kept), bytesDropped(kept)]).toEqual([true, false]);
    expect([take(dropped), bytesDropped(dropped)]).toEqual([true, true]);
  });

  it("regression: --partner found no dead letter of an Avro-keyed record (a Confluent Avro key serializer's key compared as text); now its Avro string is the partner id", () => {
    const take = deadLetterFilter({ partner: 'P-7' });
    const avroKey = (id: string, schemaId = 42) => {
      const header = Buffer.alloc(5);
      header.writeInt32BE(schemaId, 1);
      return Buffer.concat([header, avro.Type.forSchema('string').toBuffer(id)]);
    };
    const keyed = (key: Buffer | null): KafkaMessage => ({ ...letter({}), key });
    expect(take(keyed(avroKey('P-7')))).toBe(true);
    expect(take(keyed(Buffer.from('P-7')))).toBe(true);
    expect(take(keyed(avroKey('P-8')))).toBe(false);
    // A wire-format key whose body is more than one Avro string (a record of two fields) names no partner.
    expect(take(keyed(Buffer.concat([avroKey('P-7'), Buffer.from([2, 0x41])])))).toBe(false);
    expect(take(keyed(null))).toBe(false);
  });
});
