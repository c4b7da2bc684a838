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
  /** Stops delivering for good; commits still work until close(). */
  stop(): Promise<void>;
  close(): Promise<void>;
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
  bulkFailed?(tasks: number, code: string, ms: number): void;
  retry?(code: string, attempt: number): void;
  intakePaused?(reason: string): void;
  intakeResumed?(reason: string): void;
  quotaUsed?(amount: number): void;
  committed?(positions: Committable[]): void;
}

const OBSERVER_EVENTS = [
  'recordIn',
  'recordOut',
  'deadLetter',
  'bulkSubmitted',
  'bulkFinished',
  'bulkFailed',
  'retry',
  'intakePaused',
  'intakeResumed',
  'quotaUsed',
  'committed',
] as const satisfies readonly (keyof PipelineObserver)[];

/** One observer that forwards every event to each of `observers`. */
export function combineObservers(...observers: PipelineObserver[]): PipelineObserver {
  const combined: Record<string, (...args: never[]) => void> = {};
  for (const event of OBSERVER_EVENTS) {
    const targets = observers.filter((o) => typeof o[event] === 'function');
    if (targets.length === 0) continue;
    combined[event] = (...args: never[]) => {
      for (const target of targets) (target[event] as (...a: never[]) => void).apply(target, args);
    };
  }
  return combined as PipelineObserver;
}
