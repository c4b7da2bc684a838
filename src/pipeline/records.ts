// What flows through the pipeline, independent of where it came from (Kafka or a file).
import type { JsonRecord } from '../mapping/lookup-task.ts';
import type { PartnerRecord } from '../serde/partner-record.ts';

export interface SourcePosition {
  /** Kafka topic, or the input file's path. */
  topic: string;
  partition: number;
  /** Kafka offset, or the line number in a file (1-based). */
  offset: number;
}

export interface InputRecord {
  position: SourcePosition;
  key: Buffer | null;
  /** null is a tombstone: the partner was deleted upstream. */
  value: Buffer | null;
  headers: Record<string, string>;
  /** Epoch milliseconds the source stamped on the record. */
  timestamp: number;
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
  /** An intent whose quota is consumed. */
  paid?: boolean;
  taskId: string;
  hash: string;
}

/**
 * One unit of work for one partner: a lookup (possibly standing for several coalesced
 * versions of the partner, oldest first) or a delete.
 */
export interface PartnerWork {
  id: string;
  partnerId: string;
  kind: 'lookup' | 'delete';
  records: AcceptedRecord[];
  /** For lookups: the task built from the newest record, and its content hash. */
  jsonRecord?: JsonRecord;
  hash?: string;
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
}

export const positionKey = (position: SourcePosition): string => `${position.topic}:${position.partition}`;
