// Bytes a message takes in a Kafka record batch (magic 2), as kafkajs encodes it without
// compression. The broker compares a whole batch, header included, with the topic's
// max.message.bytes, and kafkajs builds one batch per topic-partition per request.

import type { RecordHeaders } from '../pipeline/records.ts';

/** Offset, length, leader epoch, magic, CRC, attributes, last offset delta, two timestamps, producer id, epoch, sequence, record count. */
export const RECORD_BATCH_OVERHEAD = 8 + 4 + 4 + 1 + 4 + 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4;

/** Length prefix, attributes, timestamp delta and offset delta, at their largest. */
const RECORD_OVERHEAD = 5 + 1 + 10 + 5;

const sizeOfVarInt = (value: number): number => {
  let zigzag = value >= 0 ? value * 2 : -value * 2 - 1;
  let size = 1;
  while (zigzag >= 0x80) {
    zigzag = Math.floor(zigzag / 0x80);
    size += 1;
  }
  return size;
};

const sizeOfBytes = (length: number | null): number =>
  length === null ? sizeOfVarInt(-1) : sizeOfVarInt(length) + length;

/** An upper bound of the message's encoded size as one record of a batch (exact but for the deltas). */
export function recordSize(message: {
  key: Buffer | null;
  value: Buffer | null;
  headers?: RecordHeaders;
}): number {
  // A name with several values is a header per value.
  const headers = Object.entries(message.headers ?? {}).flatMap(([key, value]) =>
    (Array.isArray(value) ? value : [value]).map((one) => [key, one] as const),
  );
  let size =
    RECORD_OVERHEAD + sizeOfBytes(message.key?.length ?? null) + sizeOfBytes(message.value?.length ?? null);
  size += sizeOfVarInt(headers.length);
  for (const [key, value] of headers)
    size += sizeOfBytes(Buffer.byteLength(key)) + sizeOfBytes(Buffer.byteLength(value));
  return size;
}

/**
 * The exact size of a batch holding a message alone, from its recordSize(): what the broker
 * compares with the topic's max.message.bytes. Alone, its deltas are 0, a byte each. Whether a
 * message can ever be written is this, not the upper bound (about 15 bytes more): a message
 * within those bytes of the limit was refused though the broker takes it.
 */
export function batchOfOneSize(recordBytes: number): number {
  const record = recordBytes - RECORD_OVERHEAD + 3; // attributes, timestamp delta, offset delta
  return RECORD_BATCH_OVERHEAD + sizeOfVarInt(record) + record;
}

/**
 * The messages cut into requests of at most `limit` bytes of records in all (whatever their
 * partitions), so that no batch of one is over a topic's max.message.bytes of `limit`; a
 * message over it alone is a request of its own, for the broker to refuse.
 */
export function requestsWithin<M extends Parameters<typeof recordSize>[0]>(
  messages: M[],
  limit: number,
): M[][] {
  const requests: M[][] = [];
  let current: M[] = [];
  let used = RECORD_BATCH_OVERHEAD;
  for (const message of messages) {
    const bytes = recordSize(message);
    if (current.length > 0 && used + bytes > limit) {
      requests.push(current);
      current = [];
      used = RECORD_BATCH_OVERHEAD;
    }
    current.push(message);
    used += bytes;
  }
  if (current.length > 0) requests.push(current);
  return requests;
}
