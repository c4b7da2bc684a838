// The two ends the pipeline core is plugged into: Kafka in production, files for the
// embedded default, tests and demos.
import type { Committable } from './commit-watermark.ts';
import type { OutputMessage } from './outputs.ts';
import type { InputRecord } from './records.ts';

export interface RecordSource {
  /** Starts delivering records, in order within each partition, to `deliver`. */
  start(deliver: (record: InputRecord) => Promise<void>): Promise<void>;
  /** Stops fetching (records already delivered stay in the pipeline); nothing is buffered. */
  pause(): void;
  resume(): void;
  /** Makes positions durable: after a restart, reading continues from them. */
  commit(positions: Committable[]): Promise<void>;
  /** Resolves when a bounded source (a file) has delivered its last record. */
  readonly drained?: Promise<void>;
  stop(): Promise<void>;
}

export interface OutputSink {
  /** Resolves when every message is durably written (acknowledged by Kafka, written to the file). */
  send(messages: OutputMessage[]): Promise<void>;
  close(): Promise<void>;
}

/** What the pipeline reports as it works; metrics and logs subscribe to it. */
export interface PipelineObserver {
  recordIn?(): void;
  recordOut?(outcome: string, reused: boolean): void;
  deadLetter?(stage: string, code: string): void;
  bulkSubmitted?(tasks: number): void;
  bulkFinished?(bulkId: string, tasks: number, ms: number): void;
  retry?(code: string, attempt: number): void;
  intakePaused?(reason: string): void;
  intakeResumed?(reason: string): void;
  quotaConsumed?(amount: number): void;
  tasksInFlight?(count: number): void;
  committed?(positions: Committable[]): void;
}
