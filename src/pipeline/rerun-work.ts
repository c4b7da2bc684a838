// A rerun's work for one stored partner: its latest record, mapped again with the mapping
// of the day, under a position of the rerun's own (`rerun/<jobId>`, the input partition, a
// number derived from the partner id). The position is what the bulk ledger remembers the
// lookup by: a rerun resumed after a kill offers the same partner under the same position
// and finds the bulk it already paid for, wherever the partner now sits in its chunk.
import { createHash } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
import type { LookupTask } from '../mapping/lookup-task.ts';
import type { PartnerRecord } from '../serde/partner-record.ts';
import type { StoredPartner } from './outputs.ts';
import type { PartitionRef } from './ports.ts';
import { nextWorkId, type PartnerWork, type RerunTask, type SourcePosition } from './records.ts';

/**
 * A rerun's partners handled per turn of the event loop (about 5 ms of work), as its chunk
 * is offered and as its bulk is settled: what comes back for live records meanwhile is not
 * kept waiting for a whole chunk.
 */
export const RERUN_SLICE = 25;

/** Calls `each` for every item, `perTurn` of them per turn of the event loop. */
export async function eachInTurns<T>(
  items: readonly T[],
  perTurn: number,
  each: (item: T, index: number) => void,
): Promise<void> {
  for (let index = 0; index < items.length; index += 1) {
    if (index > 0 && index % perTurn === 0) await setImmediate();
    each(items[index] as T, index);
  }
}

export const rerunTopic = (jobId: string): string => `rerun/${jobId}`;

/** Whether a position is a rerun's (no input record behind it) rather than an input record's. */
export const isRerunTopic = (topic: string): boolean => topic.startsWith('rerun/');

/** 48 bits of the partner id's hash: a safe integer, the same for the partner in every chunk. */
export function rerunPosition(jobId: string, partition: number, partnerId: string): SourcePosition {
  const offset = Number.parseInt(createHash('sha256').update(partnerId).digest('hex').slice(0, 12), 16);
  return { topic: rerunTopic(jobId), partition, offset };
}

export function rerunWork(
  partition: PartitionRef,
  epoch: number,
  partnerId: string,
  previous: StoredPartner,
  lookup: LookupTask,
  task: Omit<RerunTask, 'partition' | 'previous'>,
  now: number,
): PartnerWork {
  const input = {
    position: rerunPosition(task.jobId, partition.partition, partnerId),
    key: Buffer.from(partnerId),
    value: null,
    headers: {},
    timestamp: now,
  };
  return {
    id: nextWorkId(),
    partnerId,
    kind: 'lookup',
    records: [{ input, partner: previous.record as PartnerRecord }],
    jsonRecord: lookup.jsonRecord,
    hash: lookup.hash,
    // A rerun resumed after an upgrade finds its submission recorded under the earlier hash.
    ...(lookup.earlierHash === undefined ? {} : { earlierHash: lookup.earlierHash }),
    state: 'scheduled',
    attempts: 0,
    epoch,
    rerun: { ...task, partition: { topic: partition.topic, partition: partition.partition }, previous },
  };
}
