// Which dead letters `dlq replay` takes.
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
});
