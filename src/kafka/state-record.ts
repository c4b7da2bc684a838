// The values of the internal state topic: JSON that partner-enrich wrote (bulk ledger entries,
// rerun jobs and their progress). One written by something else failed the reader with the
// Kafka client's wrapping of a SyntaxError or TypeError, naming neither the topic nor the
// record; JSON of another shape under a ledger key was indexed as an entry.
import type { KafkaMessage } from 'kafkajs';
import type { LedgerEntry } from '../bulk/bulk-ledger.ts';
import { KafkaError } from './errors.ts';

/** Where a record is: for the error that names it. */
export interface StateRecordAt {
  topic: string;
  partition: number;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function unreadable(at: StateRecordAt, message: KafkaMessage, why: string): KafkaError {
  const key = message.key?.toString('utf8') ?? null;
  return new KafkaError(
    'STATE_RECORD_UNREADABLE',
    `state topic ${at.topic}: record at partition ${at.partition} offset ${message.offset} (key ${JSON.stringify(key)}) ` +
      `is not one partner-enrich writes: ${why}`,
    { details: { topic: at.topic, partition: at.partition, offset: message.offset, key } },
  );
}

/** The record's value as the JSON object partner-enrich writes; STATE_RECORD_UNREADABLE otherwise. */
export function stateRecordObject(
  at: StateRecordAt,
  message: KafkaMessage,
  bytes: Buffer,
): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw unreadable(at, message, `its value is not JSON (${(error as Error).message})`);
  }
  if (!isObject(value)) throw unreadable(at, message, 'its value is not a JSON object');
  return value;
}

const isLedgerTask = (task: unknown): boolean =>
  isObject(task) &&
  typeof task.taskId === 'string' &&
  typeof task.hash === 'string' &&
  Array.isArray(task.positions);

/** A ledger entry as recorded under `key`; STATE_RECORD_UNREADABLE when the value is not one. */
export function ledgerEntryOf(
  at: StateRecordAt,
  message: KafkaMessage,
  bytes: Buffer,
  key: string,
): LedgerEntry {
  const value = stateRecordObject(at, message, bytes);
  if (typeof value.createdAt !== 'number' || !Array.isArray(value.tasks) || !value.tasks.every(isLedgerTask))
    throw unreadable(at, message, 'its value is not a bulk ledger entry (createdAt, tasks)');
  return { ...(value as unknown as LedgerEntry), key };
}
