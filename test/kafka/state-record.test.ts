// What the internal state topic's readers take for one of partner-enrich's own records.
import type { KafkaMessage } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { ledgerEntryOf, stateRecordObject } from '../../src/kafka/state-record.ts';

const at = { topic: 'partner-enrich.state', partition: 2 };
const message = (value: string): KafkaMessage & { value: Buffer } => ({
  key: Buffer.from('sub-1/partners:0'),
  value: Buffer.from(value),
  offset: '7',
  timestamp: '0',
  attributes: 0,
  headers: {},
});
const read = (value: string) => ledgerEntryOf(at, message(value), message(value).value, 'sub-1/partners:0');

describe('ledgerEntryOf', () => {
  it('takes a ledger entry as written, keyed by its record key', () => {
    const entry = {
      submissionId: 'sub-1',
      createdAt: 1,
      tasks: [{ taskId: 't', hash: 'h', positions: [{ topic: 'partners', partition: 0, offset: 3 }] }],
    };
    expect(read(JSON.stringify(entry))).toEqual({ ...entry, key: 'sub-1/partners:0' });
  });

  it.each([
    ['not JSON', 'written by hand', 'its value is not JSON'],
    ['a JSON array', '[]', 'not a JSON object'],
    ['null', 'null', 'not a JSON object'],
    ['an object without tasks', '{"createdAt":1}', 'not a bulk ledger entry'],
    ['tasks that are not tasks', '{"createdAt":1,"tasks":[{"taskId":"t"}]}', 'not a bulk ledger entry'],
    ['createdAt not a number', '{"createdAt":"1","tasks":[]}', 'not a bulk ledger entry'],
  ])('refuses %s with STATE_RECORD_UNREADABLE naming the record', (_, value, why) => {
    expect(() => read(value)).toThrow(
      expect.objectContaining({
        code: 'STATE_RECORD_UNREADABLE',
        message: expect.stringContaining(why),
        details: { ...at, offset: '7', key: 'sub-1/partners:0' },
      }),
    );
  });
});

describe('stateRecordObject', () => {
  it('takes any JSON object (a rerun job or its progress)', () => {
    expect(stateRecordObject(at, message('{"id":"nightly"}'), Buffer.from('{"id":"nightly"}'))).toEqual({
      id: 'nightly',
    });
  });

  it('refuses a JSON string', () => {
    expect(() => stateRecordObject(at, message('"paused"'), Buffer.from('"paused"'))).toThrow(
      /not a JSON object/,
    );
  });
});
