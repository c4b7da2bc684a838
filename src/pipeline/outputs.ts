// The messages a finished piece of work produces: one MatchResult per input record,
// at most one lifecycle event, the storage record, or dead letters.
import { createHash } from 'node:crypto';
import type { BulkCandidate, BulkTaskResult } from '../bulk/bulk-api.ts';
import type { PartnerEnrichError } from '../errors.ts';
import { processSecrets } from '../observability/secret-redactor.ts';
import type { PartnerRecord } from '../serde/partner-record.ts';
import {
  ofContent,
  type AcceptedRecord,
  type HeaderValue,
  type InputRecord,
  type PartnerWork,
  type RecordHeaders,
  type RerunChange,
  type RerunOutcome,
} from './records.ts';

export type MatchOutcome = 'MATCH' | 'MAYBE_MATCH' | 'NO_MATCH' | 'FAILED';
export type OutputName = 'matches' | 'events' | 'storage' | 'deadLetters';

export interface OutputMessage {
  output: OutputName;
  key: string | Buffer | null;
  /** An object encoded by the sink with the output's schema; raw bytes for dead letters; null for a tombstone. */
  value: object | Buffer | null;
  headers?: RecordHeaders;
  /**
   * Set on storage records: the input partition the partner's records came from, so that
   * storage partition N holds the partner state of input partition N (its changelog).
   */
  partition?: number;
}

export interface MatchCandidate {
  svcId: string;
  score: number;
  dataSource: string | null;
  name: string | null;
}

/**
 * What the storage knows of a partner: enough to skip unchanged content, to reuse its match,
 * and for a rerun to look it up again (its latest record, mapped anew with the mapping of the
 * day) and to choose it (by country, source system, last outcome, match time).
 */
export interface StoredPartner {
  hash: string;
  svcId: string | null;
  outcome: MatchOutcome;
  bestCandidate: MatchCandidate | null;
  record: PartnerRecord;
  /** Epoch milliseconds of the lookup behind the outcome. */
  matchedAt: number;
  /** The newest input record whose outputs were written with this state (null: not known). */
  source: InputIdentity | null;
  /**
   * The last rerun that looked the partner up and wrote its outputs, kept through live lookups
   * since: a share resumed after a kill counts by it the partners whose outputs its lost chunk
   * wrote (they are not looked up again). Absent in states written before it was kept.
   */
  rerun?: RerunMark | null;
}

/** A rerun's lookup of a stored partner: the job, and what it changed (null: nothing). */
export interface RerunMark {
  jobId: string;
  change: RerunChange | null;
}

/** What this job's lookup of the stored partner came to, when its mark says it was this job's. */
export function rerunOutcome(jobId: string, stored: StoredPartner): RerunOutcome | undefined {
  const mark = stored.rerun;
  if (mark?.jobId !== jobId) return undefined;
  return mark.change === null
    ? { kind: 'unchanged', outcome: stored.outcome }
    : { kind: 'changed', change: mark.change, outcome: stored.outcome };
}

/** An input record told apart from any other of its partition: by offset and timestamp. */
export interface InputIdentity {
  offset: number;
  timestamp: number;
  /**
   * Of a stored state's source: the oldest record of the partner coalesced into the lookup of
   * this one (absent or null: a lookup of one record). The records between them went with it.
   */
  coalescedFrom?: { offset: number; timestamp: number } | null;
}

/**
 * Whether the work's records had their outputs written already, with the state stored now:
 * a redelivery (the former owner of the partition, or this process before a crash, wrote them
 * and did not commit). Its newest record must be the very one the state names, with the same
 * content, or one of the older records of the coalesced lookup that wrote it (coalescedInto);
 * the timestamp guards against a recreated input topic whose offsets start again.
 */
export function alreadyWritten(work: PartnerWork, stored: StoredPartner | undefined): boolean {
  const newest = work.records.at(-1)?.input;
  const source = stored?.source;
  if (work.rerun || newest === undefined || source == null) return false;
  const { offset } = newest.position;
  if (offset === source.offset && newest.timestamp === source.timestamp) return ofContent(work, stored?.hash);
  return coalescedInto(source, offset, newest.timestamp);
}

/**
 * Whether the record at `offset` was one of the older records of the coalesced lookup that
 * wrote the state named by `source`, read again apart from the newest (a restart's fetch
 * ended between them, or it was dispatched before the newer one came): its outputs were
 * written, and looking it up would pay again and store an older version, which the newest
 * one, read next, would pay for once more. The oldest is named exactly; one between them by
 * its offset, with a timestamp between theirs (the guard against a recreated input topic's
 * offsets, as the timestamp is for the newest).
 */
function coalescedInto(source: InputIdentity, offset: number, timestamp: number): boolean {
  const from = source.coalescedFrom;
  if (!from || offset < from.offset || offset >= source.offset) return false;
  if (offset === from.offset) return timestamp === from.timestamp;
  return (
    timestamp >= Math.min(from.timestamp, source.timestamp) &&
    timestamp <= Math.max(from.timestamp, source.timestamp)
  );
}

/**
 * Whether the work's newest record is the input record that last finished its partner without
 * a state of its own (a delete, or a lookup that failed for good), read again before its
 * position was committed: a redelivery, as alreadyWritten tells of records that stored a
 * state. A second tombstone of a deleted partner, at another position, is not one.
 */
export function alreadyFinished(work: PartnerWork, finishedBy: InputIdentity | undefined): boolean {
  // Asked for every record: nothing is built for the answer.
  if (finishedBy === undefined || work.rerun) return false;
  const newest = work.records.at(-1)?.input;
  if (newest === undefined) return false;
  const { offset } = newest.position;
  return (
    (finishedBy.offset === offset && finishedBy.timestamp === newest.timestamp) ||
    coalescedInto(finishedBy, offset, newest.timestamp)
  );
}

/**
 * The newest input record of the work, and the oldest where it coalesced several; null for a
 * rerun's, made for none.
 */
export const inputOf = (work: PartnerWork): InputIdentity | null => {
  const { records } = work;
  const newest = records.at(-1)?.input;
  if (!newest) return null;
  const identity: InputIdentity = { offset: newest.position.offset, timestamp: newest.timestamp };
  const oldest = (records[0] as (typeof records)[number]).input;
  if (oldest !== newest)
    identity.coalescedFrom = { offset: oldest.position.offset, timestamp: oldest.timestamp };
  return identity;
};

/** The input record a delete stands for (a delete is never coalesced: one record). */
export const tombstoneOf = (work: PartnerWork): InputIdentity => inputOf(work) as InputIdentity;

/**
 * Headers of a storage record naming the input record it finished without a state of its
 * own: the tombstone that deleted the partner (on a storage tombstone), or the record whose
 * lookup failed for good (on the partner's state written again, or a storage tombstone when
 * none was stored). A restore from the storage topic remembers it as the partition's file
 * does (finishedByOf). Deletes keep their own names, which versions before failures had them
 * read.
 */
const DELETED_BY = { offset: 'pe.deleted-by.offset', timestamp: 'pe.deleted-by.timestamp' } as const;
const FAILED_BY = { offset: 'pe.failed-by.offset', timestamp: 'pe.failed-by.timestamp' } as const;

/** The oldest record of a failed coalesced lookup (InputIdentity.coalescedFrom), beside the failed-by headers. */
const FAILED_FROM = {
  offset: 'pe.failed-by.coalesced-from.offset',
  timestamp: 'pe.failed-by.coalesced-from.timestamp',
} as const;

const finishedByHeaders = (names: typeof DELETED_BY | typeof FAILED_BY, input: InputIdentity) => {
  const headers: Record<string, string> = {
    [names.offset]: String(input.offset),
    [names.timestamp]: String(input.timestamp),
  };
  if (input.coalescedFrom) {
    headers[FAILED_FROM.offset] = String(input.coalescedFrom.offset);
    headers[FAILED_FROM.timestamp] = String(input.coalescedFrom.timestamp);
  }
  return headers;
};

/** The input record a storage record's headers name; undefined for one that names none (or written before they existed). */
export function finishedByOf(
  headers: Record<string, HeaderValue | HeaderValue[] | undefined> | undefined,
): InputIdentity | undefined {
  const number = (name: string) => {
    const value = headers?.[name];
    const text = Array.isArray(value) ? value[0]?.toString() : value?.toString();
    return text !== undefined && /^-?\d+$/.test(text) ? Number(text) : undefined;
  };
  for (const names of [FAILED_BY, DELETED_BY]) {
    const offset = number(names.offset);
    const timestamp = number(names.timestamp);
    if (offset === undefined || timestamp === undefined) continue;
    const from = { offset: number(FAILED_FROM.offset), timestamp: number(FAILED_FROM.timestamp) };
    return from.offset !== undefined && from.timestamp !== undefined
      ? { offset, timestamp, coalescedFrom: from as { offset: number; timestamp: number } }
      : { offset, timestamp };
  }
  return undefined;
}

/** Whether the stored state is still the one read before (live work stores a newer one, or deletes it). */
export const sameStored = (read: StoredPartner, now: StoredPartner | undefined): boolean =>
  now !== undefined &&
  now.hash === read.hash &&
  now.source?.offset === read.source?.offset &&
  now.source?.timestamp === read.source?.timestamp;

export interface Thresholds {
  fullMatch: number;
  maybeMatch: number;
}

export interface EmitContext {
  storageId: string;
  now: () => number;
}

export function classify(best: BulkCandidate | undefined, thresholds: Thresholds): MatchOutcome {
  if (!best) return 'NO_MATCH';
  if (best.score >= thresholds.fullMatch) return 'MATCH';
  if (best.score >= thresholds.maybeMatch) return 'MAYBE_MATCH';
  return 'NO_MATCH';
}

const toCandidate = (c: BulkCandidate): MatchCandidate => ({
  svcId: c.svcId,
  score: c.score,
  dataSource: c.dataSource ?? null,
  name: c.name ?? null,
});

function matchResult(
  record: AcceptedRecord,
  partnerId: string,
  fields: {
    outcome: MatchOutcome;
    best: MatchCandidate | null;
    others?: MatchCandidate[];
    golden?: { svcId: string; json: string } | null;
    bulkId?: string | null;
    failureReason?: string | null;
    reused?: boolean;
    rerunId?: string | null;
  },
  context: EmitContext,
): OutputMessage {
  const { position } = record.input;
  return {
    output: 'matches',
    key: partnerId,
    value: {
      partnerId,
      outcome: fields.outcome,
      bestCandidate: fields.best,
      otherCandidates: fields.others ?? [],
      goldenRecord: fields.golden ?? null,
      bulkId: fields.bulkId ?? null,
      source: { topic: position.topic, partition: position.partition, offset: position.offset },
      failureReason: fields.failureReason ?? null,
      reused: fields.reused ?? false,
      rerunId: fields.rerunId ?? null,
      processedAt: context.now(),
    },
  };
}

/** Namespace of the event ids (RFC 9562 name-based UUIDs), so they cannot collide with other v5 ids. */
const EVENT_ID_NAMESPACE = Buffer.from('6f0c3b52a1e94d27b8a4c2e1d95f7a03', 'hex');

/**
 * The event's id, derived from what it says (partner, type, content) and from the source
 * position of the newest input record behind it: after a crash the records are read again
 * from the last commit and the same event gets the same id, so consumers can drop the
 * repeat; a new change, or the same content sent again later, gets a new one.
 */
function eventId(work: PartnerWork, type: string): string {
  const position = work.records.at(-1)?.input.position;
  const name = JSON.stringify([
    work.partnerId,
    type,
    work.hash ?? null,
    position?.topic ?? null,
    position?.partition ?? null,
    position?.offset ?? null,
  ]);
  const bytes = createHash('sha1').update(EVENT_ID_NAMESPACE).update(name).digest().subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x50; // version 5: SHA-1, name-based
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80; // RFC 9562 variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function lifecycle(
  work: PartnerWork,
  previous: StoredPartner | undefined,
  stored: StoredPartner,
  context: EmitContext,
  traceId: string | null,
): OutputMessage[] {
  const { rerun } = work;
  // A rerun looked up content the storage had: an event says the match changed (or, for a
  // new downstream, announces every partner), not that the partner did.
  const type = rerun
    ? rerun.initialize
      ? 'BusinessPartnerCreated'
      : stored.rerun?.change
        ? 'BusinessPartnerUpdated'
        : null
    : previous === undefined
      ? 'BusinessPartnerCreated'
      : !ofContent(work, previous.hash)
        ? 'BusinessPartnerUpdated'
        : null;
  if (!type) return [];
  return [
    {
      output: 'events',
      key: work.partnerId,
      value: {
        eventId: eventId(work, type),
        type,
        partnerId: work.partnerId,
        svcId: stored.svcId,
        storageId: context.storageId,
        occurredAt: context.now(),
        traceId,
        rerunId: rerun?.jobId ?? null,
      },
    },
  ];
}

/**
 * How a match changed between two lookups of the same partner, if it did: a MATCH gained
 * or lost, another svcId for the same outcome, or the outcome crossing a threshold otherwise.
 */
export function matchChange(before: StoredPartner, after: StoredPartner): RerunChange | undefined {
  if (before.outcome === after.outcome) return before.svcId !== after.svcId ? 'svcIdChanged' : undefined;
  if (after.outcome === 'MATCH') return 'gainedMatch';
  if (before.outcome === 'MATCH') return 'lostMatch';
  return 'outcomeChanged';
}

function storageRecord(
  work: PartnerWork,
  stored: StoredPartner,
  headers?: Record<string, string>,
): OutputMessage {
  return {
    output: 'storage',
    key: work.partnerId,
    partition: inputPartition(work),
    ...(headers ? { headers } : {}),
    value: {
      partnerId: work.partnerId,
      record: stored.record,
      contentHash: stored.hash,
      svcId: stored.svcId,
      outcome: stored.outcome,
      bestCandidate: stored.bestCandidate,
      matchedAt: stored.matchedAt,
      source: stored.source,
      rerun: stored.rerun ?? null,
    },
  };
}

/** The partner record the work's task was built from: a lookup's records all carry theirs. */
const newestPartner = (work: PartnerWork): PartnerRecord => work.records.at(-1)?.partner as PartnerRecord;

const inputPartition = (work: PartnerWork): number =>
  (work.records[0] as PartnerWork['records'][number]).input.position.partition;

const traceOf = (work: PartnerWork): string | null => work.records.at(-1)?.input.headers.traceparent ?? null;

/** A lookup came back: results for every record, the event, the new storage state. */
export function matchedOutputs(
  work: PartnerWork,
  result: BulkTaskResult,
  bulkId: string,
  previous: StoredPartner | undefined,
  thresholds: Thresholds,
  context: EmitContext,
): { messages: OutputMessage[]; stored: StoredPartner } {
  const [first, ...rest] = result.candidates.map(toCandidate);
  const outcome = classify(result.candidates[0], thresholds);
  const best = first ?? null;
  const golden = result.goldenRecord ?? null;
  const stored: StoredPartner = {
    hash: work.hash as string,
    svcId: outcome === 'MATCH' || outcome === 'MAYBE_MATCH' ? (best?.svcId ?? null) : null,
    outcome,
    bestCandidate: best,
    record: newestPartner(work),
    matchedAt: context.now(),
    // A rerun's lookup was not made for an input record: the live one it replays stays named.
    source: work.rerun ? (previous?.source ?? null) : inputOf(work),
  };
  stored.rerun = work.rerun
    ? { jobId: work.rerun.jobId, change: matchChange(work.rerun.previous, stored) ?? null }
    : (previous?.rerun ?? null);
  if (work.rerun?.dryRun) return { messages: [], stored };
  const rerunId = work.rerun?.jobId ?? null;
  const messages = work.records.map((record) =>
    matchResult(record, work.partnerId, { outcome, best, others: rest, golden, bulkId, rerunId }, context),
  );
  messages.push(...lifecycle(work, previous, stored, context, traceOf(work)), storageRecord(work, stored));
  return { messages, stored };
}

/** An answer without a candidate or a golden record: what a lookup's outputs carry at the least. */
const EMPTY_ANSWER: BulkTaskResult = { taskId: '', status: 'OK', candidates: [] };

/**
 * The least a lookup of the work writes, whatever the service answers: when one of these
 * messages cannot fit its topic, no answer's outputs can. (Without a candidate the outcome is
 * NO_MATCH whatever the thresholds.)
 */
export function leastOutputs(work: PartnerWork, context: EmitContext): OutputMessage[] {
  return matchedOutputs(work, EMPTY_ANSWER, '', undefined, { fullMatch: 1, maybeMatch: 1 }, context).messages;
}

/** Content unchanged since the last successful match: its result is repeated, no quota spent. */
export function reusedOutputs(
  work: PartnerWork,
  stored: StoredPartner,
  context: EmitContext,
): OutputMessage[] {
  return work.records.map((record) =>
    matchResult(
      record,
      work.partnerId,
      { outcome: stored.outcome, best: stored.bestCandidate, reused: true },
      context,
    ),
  );
}

/** A tombstone: the partner leaves the storage. */
export function deleteOutputs(
  work: PartnerWork,
  previous: StoredPartner | undefined,
  context: EmitContext,
): OutputMessage[] {
  const tombstone = tombstoneOf(work);
  return [
    { output: 'matches', key: work.partnerId, value: null },
    {
      output: 'events',
      key: work.partnerId,
      value: {
        eventId: eventId(work, 'BusinessPartnerDeleted'),
        type: 'BusinessPartnerDeleted',
        partnerId: work.partnerId,
        svcId: previous?.svcId ?? null,
        storageId: context.storageId,
        occurredAt: context.now(),
        traceId: traceOf(work),
        rerunId: null,
      },
    },
    {
      output: 'storage',
      key: work.partnerId,
      partition: inputPartition(work),
      value: null,
      headers: finishedByHeaders(DELETED_BY, tombstone),
    },
  ];
}

/** Where a record failed, in its dead letter's `pe.stage` header. */
export const FAILURE_STAGES = ['decode', 'mapping', 'lookup', 'output'] as const;
export type FailureStage = (typeof FAILURE_STAGES)[number];

/**
 * The original bytes and headers with the reason in headers of its own (`pe.*`, which win over
 * an original of the same name), so the record can be replayed after a fix as it came.
 */
export function deadLetter(
  input: InputRecord,
  stage: FailureStage,
  error: PartnerEnrichError,
  attempts: number,
  now: number,
): OutputMessage {
  return {
    output: 'deadLetters',
    key: input.key,
    value: input.value,
    headers: {
      ...input.originalHeaders,
      'pe.stage': stage,
      'pe.error.code': error.code,
      // The reason may quote the service (a task's or job's status text): a credential it echoes
      // stays out of the topic, as it stays out of the logs.
      'pe.error.message': processSecrets.redact(error.message).slice(0, 1000),
      'pe.attempts': String(attempts),
      'pe.origin.topic': input.position.topic,
      'pe.origin.partition': String(input.position.partition),
      'pe.origin.offset': String(input.position.offset),
      'pe.failed-at': new Date(now).toISOString(),
    },
  };
}

/** The pipeline's own headers on a dead letter (its reason, origin, replay) start so; the input's keep their names. */
export const isPipelineHeader = (name: string): boolean => name.startsWith('pe.');

/** Header of a dead letter whose original bytes were dropped; its value is their length. */
export const VALUE_DROPPED_HEADER = 'pe.value-dropped';

/**
 * The dead letter without the original bytes and headers, for a record whose bytes alone
 * are over the dead-letter topic's limit (the sink rejects such a dead letter with
 * OUTPUT_TOO_LARGE): the reason and origin survive, pe.value-dropped says how many bytes were
 * dropped. The value is empty rather than null, which on the input topic would delete the
 * partner, and `dlq replay` leaves such dead letters out, so the original headers go too.
 */
export function withoutValue(letter: OutputMessage): OutputMessage {
  const bytes = Buffer.isBuffer(letter.value) ? letter.value.length : 0;
  const reasons = Object.entries(letter.headers ?? {}).filter(([name]) => isPipelineHeader(name));
  return {
    ...letter,
    value: Buffer.alloc(0),
    headers: { ...Object.fromEntries(reasons), [VALUE_DROPPED_HEADER]: String(bytes) },
  };
}

/**
 * Lookups that failed for good: a FAILED result for each record, and each record as a dead
 * letter. A rerun's lookup has no input bytes to replay and keeps the stored state: its
 * FAILED result says so. A live one also writes a storage record that changes no state but
 * names its newest record (the partner's state as it is, `stored`, or a storage tombstone
 * when none is), so that the record read again after a crash, here or by the partition's next
 * owner, is known as finished (alreadyFinished) instead of failing and being written again.
 */
export function failedOutputs(
  work: PartnerWork,
  error: PartnerEnrichError,
  context: EmitContext,
  stored: StoredPartner | undefined,
): OutputMessage[] {
  const failureReason = `${error.code}: ${error.message}`;
  const { rerun } = work;
  if (rerun) {
    if (rerun.dryRun) return [];
    return work.records.map((record) =>
      matchResult(
        record,
        work.partnerId,
        { outcome: 'FAILED', best: null, failureReason, rerunId: rerun.jobId },
        context,
      ),
    );
  }
  const failedBy = finishedByHeaders(FAILED_BY, inputOf(work) as InputIdentity);
  const messages = work.records.flatMap((record) => [
    matchResult(record, work.partnerId, { outcome: 'FAILED', best: null, failureReason }, context),
    deadLetter(record.input, 'lookup', error, work.attempts, context.now()),
  ]);
  messages.push(
    stored
      ? storageRecord(work, stored, failedBy)
      : {
          output: 'storage',
          key: work.partnerId,
          partition: inputPartition(work),
          value: null,
          headers: failedBy,
        },
  );
  return messages;
}
