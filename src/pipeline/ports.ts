// The two ends the pipeline core is plugged into: Kafka in production, files for the
// embedded default, tests and demos.
import type { Committable } from './commit-watermark.ts';
import type { OutputMessage } from './outputs.ts';
import type { InputRecord, SourcePosition } from './records.ts';

export interface PartitionRef {
  topic: string;
  partition: number;
}

/** What a source tells the pipeline. */
export interface SourceHandler {
  /**
   * Offers one record, in order within its partition. `false`: intake is full and the record
   * was not taken; the source stops delivering that partition and delivers the record again
   * after resume.
   */
  offer(record: InputRecord): boolean;
  /** Partitions this member owns from now on; called before any of their records is offered. */
  assigned(partitions: PartitionRef[]): void;
  /** Partitions this member no longer owns: their work is dropped and never committed here. */
  revoked(partitions: PartitionRef[]): void;
  /** The group began to rebalance: ownership is uncertain until the next assignment. */
  rebalancing(): void;
  /** The source cannot go on (its consumer crashed and will not restart). */
  failed(error: Error): void;
  /**
   * The partition's offsets up to `position` hold no record for the pipeline (a transaction's
   * commit or abort marker, aborted records): once the records before it are finished, its
   * commit position may pass them. Called in order with the partition's records.
   */
  passed?(position: SourcePosition): void;
}

export interface RecordSource {
  /** Starts delivering records to `handler`. */
  start(handler: SourceHandler): Promise<void>;
  /** Stops fetching these partitions (records already offered stay in the pipeline); nothing is buffered. */
  pause(partitions: PartitionRef[]): void;
  resume(partitions: PartitionRef[]): void;
  /**
   * At most how long a resumed partition waits before it is fetched again, where that is more
   * than a moment (Kafka: the consumer sleeps a fetch wait while every partition is paused).
   */
  readonly resumeDelayMs?: number;
  /** Makes positions durable: after a restart, reading continues from them. Rejects when the commit failed. */
  commit(positions: Committable[]): Promise<void>;
  /** This member's id in its consumer group, once it joined (Kafka). */
  readonly memberId?: string | undefined;
  /** The group's members now and this process's earlier ids (Kafka): an intent's writer not among them is gone. */
  groupMembers?(): Promise<Set<string>>;
  /**
   * Reads the partitions' committed positions again and continues from them (Kafka): the
   * positions the consumer fetched when it joined may predate a transaction of the former
   * owner that ended since.
   */
  rewind?(partitions: PartitionRef[]): Promise<void>;
  /**
   * Why the source cannot reach what it reads from now, if it cannot (Kafka: no broker has
   * answered its consumer for a while); a reason not to be ready, not a failure.
   */
  readonly unreachable?: string | undefined;
  /** Resolves when a bounded source (a file) has delivered its last record. */
  readonly drained?: Promise<void>;
  /** Stops delivering for good; commits still work until close(). */
  stop(): Promise<void>;
  close(): Promise<void>;
}

export interface OutputSink {
  /** Resolves when every message is durably written (acknowledged by Kafka, written to the file). */
  send(messages: OutputMessage[]): Promise<void>;
  /**
   * A sink whose topics limit the size of a message: the smallest limit in bytes, and a check
   * that throws OUTPUT_TOO_LARGE for a message its topic can never take, writing nothing.
   */
  smallestLimit?(): number;
  check?(messages: OutputMessage[]): void;
  close(): Promise<void>;
}

/**
 * Exactly-once outputs (Kafka): per input partition, a transaction carries outputs and the
 * consumed position they finish. `Prepared` is an output checked and encoded for it.
 */
export interface TransactionalOutputs<Prepared = unknown> {
  /** Checks and encodes outputs; throws OUTPUT_TOO_LARGE for one its topic can never take. */
  prepare(messages: OutputMessage[]): Prepared[];
  /** Starts the partition's producer, fencing its previous owner's. */
  open(partition: PartitionRef): Promise<void>;
  /** One transaction; rejects with TRANSACTION_FENCED, OUTPUT_REFUSED_AS_TOO_LARGE or TRANSACTION_FAILED. */
  commit(partition: PartitionRef, outputs: Prepared[], position: Committable): Promise<void>;
  close(partition: PartitionRef): Promise<void>;
}

/** What the pipeline reports as it works; metrics and logs subscribe to it. */
export interface PipelineObserver {
  recordIn?(): void;
  recordOut?(outcome: string, reused: boolean): void;
  /** Records read again whose outputs were written before (not committed): finished without writing them twice. */
  redelivered?(records: number): void;
  deadLetter?(stage: string, code: string): void;
  /**
   * A record of a multi-partition input whose key does not name the partner its value is
   * about (`missing`: it has no key): another record of its partner may be on another
   * partition, whose partner state is apart from this one's.
   */
  keyNotPartnerId?(position: SourcePosition, missing: boolean): void;
  bulkSubmitted?(tasks: number): void;
  bulkFinished?(bulkId: string, tasks: number, ms: number): void;
  bulkFailed?(tasks: number, code: string, ms: number): void;
  retry?(code: string, attempt: number): void;
  intakePaused?(reason: string): void;
  intakeResumed?(reason: string): void;
  quotaUsed?(amount: number): void;
  /** The service answered a quota consume OVER_LIMIT (live or rerun). */
  quotaOverLimit?(): void;
  committed?(positions: Committable[]): void;
  /** A commit (or a ledger release after it) failed; it is tried again at the next interval. */
  commitFailed?(reason: string): void;
  /**
   * Records under an intent whose submitter died are looked up by this member: without
   * consuming quota again where the intent says it was consumed (`paid`), else consuming it.
   */
  intentAdopted?(records: number, paid: boolean): void;
  /**
   * At start, the bulk ledger journal held what a killed process on this disk had paid for
   * (`paid` submissions) or created (`bulks`) and the state topic lacked: written there now.
   */
  ledgerJournalRepublished?(counts: { paid: number; bulks: number; records: number }): void;
  /** Records whose bulk the service no longer knows (it was restarted) are looked up anew. */
  bulkGone?(records: number): void;
  partitionsAssigned?(partitions: PartitionRef[]): void;
  partitionsRevoked?(partitions: PartitionRef[]): void;
  /** Exactly-once: the partition's producer was fenced; the partition is taken for revoked. */
  fenced?(partition: PartitionRef, reason: string): void;
  /** Exactly-once: a transaction of a partition that moved while it ran failed; the partition's next owner ends it. */
  transactionAbandoned?(partition: PartitionRef, reason: string): void;
}

const OBSERVER_EVENTS = [
  'recordIn',
  'recordOut',
  'redelivered',
  'deadLetter',
  'keyNotPartnerId',
  'bulkSubmitted',
  'bulkFinished',
  'bulkFailed',
  'retry',
  'intakePaused',
  'intakeResumed',
  'quotaUsed',
  'quotaOverLimit',
  'committed',
  'commitFailed',
  'intentAdopted',
  'ledgerJournalRepublished',
  'bulkGone',
  'partitionsAssigned',
  'partitionsRevoked',
  'fenced',
  'transactionAbandoned',
] as const satisfies readonly (keyof PipelineObserver)[];

/** One observer that forwards every event to each of `observers`. */
export function combineObservers(...observers: PipelineObserver[]): PipelineObserver {
  const combined: Record<string, (...args: never[]) => void> = {};
  for (const event of OBSERVER_EVENTS) {
    const targets = observers.filter((o) => typeof o[event] === 'function');
    if (targets.length === 0) continue;
    // Most events are counted per record: one observer is called directly.
    const [only] = targets;
    if (targets.length === 1 && only) {
      combined[event] = (only[event] as (...a: never[]) => void).bind(only);
      continue;
    }
    combined[event] = (...args: never[]) => {
      for (const target of targets) (target[event] as (...a: never[]) => void).apply(target, args);
    };
  }
  return combined as PipelineObserver;
}
