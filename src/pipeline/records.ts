// What flows through the pipeline, independent of where it came from (Kafka or a file).
import type { PartnerEnrichError } from '../errors.ts';
import type { JsonRecord } from '../mapping/lookup-task.ts';
import type { PartnerRecord } from '../serde/partner-record.ts';
import type { MatchOutcome, StoredPartner } from './outputs.ts';

export interface SourcePosition {
  /** Kafka topic, or the input file's path. */
  topic: string;
  partition: number;
  /** Kafka offset, or the line number in a file (1-based). */
  offset: number;
}

/** A header's value as a source gave it; a name repeated in one record gives several. */
export type HeaderValue = string | Buffer;
export type RecordHeaders = Record<string, HeaderValue | HeaderValue[]>;

export interface InputRecord {
  position: SourcePosition;
  key: Buffer | null;
  /** null is a tombstone: the partner was deleted upstream. */
  value: Buffer | null;
  /** Each header's first value as text (trace context). */
  headers: Record<string, string>;
  /** The headers as received, bytes and repeats kept: a dead letter carries them, a replay sends them again. */
  originalHeaders?: RecordHeaders;
  /** Epoch milliseconds the source stamped on the record. */
  timestamp: number;
  /**
   * The source could not deliver the record whole (a file line over files.maxRecordBytes):
   * it is dead-lettered at decode with this reason, `value` being what the source kept of it.
   */
  refused?: PartnerEnrichError;
}

export interface AcceptedRecord {
  input: InputRecord;
  /** Decoded record; absent for tombstones. */
  partner?: PartnerRecord;
}

/** Where this record was already submitted (or is about to be), so it is not paid for twice. */
export interface SubmittedTask {
  submissionId: string;
  /** Absent while the submission is an intent: its bulk is not created yet. */
  bulkId?: string;
  /** The task's quota is consumed: its intent was paid for, or the task's unit before it (LedgerTask.paid). */
  paid?: boolean;
  taskId: string;
  hash: string;
}

/**
 * One unit of work for one partner: a lookup (possibly standing for several coalesced
 * versions of the partner, oldest first) or a delete.
 */
export interface PartnerWork {
  /** Its task's id in a bulk (see nextWorkId). */
  id: string;
  partnerId: string;
  kind: 'lookup' | 'delete';
  records: AcceptedRecord[];
  /** For lookups: the task built from the newest record, and its content hash. */
  jsonRecord?: JsonRecord;
  hash?: string;
  /** The hash earlier versions computed for the same content, where it differs (LookupTask.earlierHash). */
  earlierHash?: string;
  /** queued: waiting in the batcher (may still be coalesced); submitted: in a bulk. */
  state: 'scheduled' | 'queued' | 'submitted';
  /** The assignment of the work's partition it belongs to (see Ownership); stale work is dropped. */
  epoch: number;
  /** Lookups made so far (submitted or resumed), reported with a dead letter. */
  attempts: number;
  /** Answers about the task itself (FAILED, a failed bulk) so far; they spend the retry budget. */
  failures?: number;
  resumeFrom?: SubmittedTask;
  /** It went through an earlier submission's intent (withdrawn or adopted): the ledger is not asked again. */
  adopted?: boolean;
  /** Its quota is consumed and no bulk was created with it yet (a create failed, its submitter died): not paid again. */
  prepaid?: boolean;
  /**
   * The partner's stored state as dispatch read it. Nothing else writes it while the work is
   * active (one piece of work per partner at a time, see KeyScheduler), so its settling
   * reuses it instead of reading the store again.
   */
  storedAtDispatch?: StoredPartner;
  /** Set on a rerun's work: a stored partner looked up again, not an input record. */
  rerun?: RerunTask;
  /** A rerun's work that live work for its partner replaced before it was paid for. */
  superseded?: boolean;
  /**
   * A rerun's work in a bulk waiting for its share of the quota, no consume asked for it yet:
   * live work for its partner replaces it, as in the batcher (KeyScheduler). Kept behind it,
   * a live record waited for the rerun's share, windows long where the quota is small.
   */
  awaitingQuota?: boolean;
  /**
   * Live work that replaced a rerun's work: looked up even where the storage has its content
   * (a re-send), since the stored match is the one the rerun was there to refresh.
   */
  replacedRerun?: boolean;
}

/** What a rerun's lookup of one stored partner ended as. */
export type RerunOutcome =
  | { kind: 'changed'; change: RerunChange; outcome: MatchOutcome }
  | { kind: 'unchanged'; outcome: MatchOutcome }
  | { kind: 'failed'; reason: string }
  /** A live record for the partner came first: its lookup is the partner's new state. */
  | { kind: 'superseded' }
  /** The partition moved away (or the pipeline stopped) before the outputs were durable. */
  | { kind: 'dropped' };

export type RerunChange = 'gainedMatch' | 'lostMatch' | 'svcIdChanged' | 'outcomeChanged';

export interface RerunTask {
  jobId: string;
  /** The input partition whose partner this is (the work's records carry the rerun's own positions). */
  partition: { topic: string; partition: number };
  /** The state the rerun read: what the new match is compared with. */
  previous: StoredPartner;
  /** A BusinessPartnerCreated event regardless of history. */
  initialize: boolean;
  /** Nothing is written: the outcome is only reported. */
  dryRun: boolean;
  /** The most of each quota window the rerun may take now (it can change while it runs). */
  quotaShare: () => number;
  /** Called once, when the outputs are durable (or nothing is to be written). */
  settle(outcome: RerunOutcome): void;
}

let lastWorkId = 0;

/**
 * The id of a new piece of work, which is its task's id in the bulk it goes into: a bulk's
 * tasks all come from this process, so a counter tells them apart (a bulk submitted by an
 * earlier run is read with the task ids its ledger entry recorded), where a UUID per record
 * cost its generation and 36 characters in every request and ledger entry.
 */
export const nextWorkId = (): string => (++lastWorkId).toString(36);

/** A partition's key in the maps that follow partitions (the offset, if any, is not part of it). */
export const positionKey = (position: { topic: string; partition: number }): string =>
  `${position.topic}:${position.partition}`;

/** The input partition a piece of work belongs to: its ownership, its partner state. */
export const partitionOf = (work: PartnerWork): { topic: string; partition: number } =>
  work.rerun?.partition ?? (work.records[0] as AcceptedRecord).input.position;

/**
 * Whether a hash stored earlier (partner state, a ledger submission) is of the work's content:
 * its hash, or the one earlier versions computed for it, so that what they stored before an
 * upgrade is neither looked up nor paid for again.
 */
export const ofContent = (work: PartnerWork, hash: string | undefined): boolean =>
  hash !== undefined && (hash === work.hash || hash === work.earlierHash);
