// Hot paths publish events on named diagnostics channels instead of logging: publishing
// to a channel without subscribers costs next to nothing, and metrics, logs or an APM
// agent subscribe without the pipeline knowing about them. Names are namespaced so that
// `diagnostics_channel.subscribe('partner-enrich:bulk', ...)` works from anywhere.
import diagnosticsChannel from 'node:diagnostics_channel';
import type { IntakePauseReason, RecordOutcome, RecordSource } from './metrics.ts';

export const CHANNEL_NAMES = {
  records: 'partner-enrich:records',
  bulk: 'partner-enrich:bulk',
  quota: 'partner-enrich:quota',
  intake: 'partner-enrich:intake',
  http: 'partner-enrich:http',
  retry: 'partner-enrich:retry',
  lag: 'partner-enrich:lag',
  state: 'partner-enrich:state',
  rerun: 'partner-enrich:rerun',
} as const;

/** Counts, so that a batch of records is one event rather than one per record. */
export type RecordsEvent =
  | { type: 'in'; source: RecordSource; count: number }
  | { type: 'out'; outcome: RecordOutcome; count: number }
  | { type: 'dead-letter'; reason: string; count: number }
  /** Of a multi-partition input, keyed by something else than their partner id (`missing`: no key). */
  | { type: 'key-not-partner-id'; missing: boolean; count: number }
  /** Read again with their outputs written already (not committed): finished without writing. */
  | { type: 'redelivered'; count: number }
  /** Under an intent whose submitter died: looked up here, consuming quota unless `paid`. */
  | { type: 'adopted'; paid: boolean; count: number };

export type BulkEvent =
  | { type: 'submitted'; bulkId: string; tasks: number }
  /** Results complete; seconds from submission. */
  | { type: 'completed'; bulkId: string; tasks: number; seconds: number }
  | { type: 'failed'; bulkId: string; tasks: number; seconds: number; code: string };

export type QuotaEvent = { type: 'consumed'; tasks: number } | { type: 'over-limit' };

export type IntakeEvent = { type: 'paused' | 'resumed'; reason: IntakePauseReason };

/** `status` is the HTTP status, or `error` when no response came back. */
export interface HttpEvent {
  operation: string;
  status: number | 'error';
  seconds: number;
}

/** `reason` is the error code that caused the retry. */
export interface RetryEvent {
  operation: string;
  reason: string;
  attempt: number;
}

/** A partition's lag, or `unknown` when the topic's lag could not be read. */
export type LagEvent = { topic: string; partition: number; lag: number } | { topic: string; unknown: true };

/**
 * A partition's partner state being restored from the storage topic: `progress` for each
 * batch of `records` applied, `restored` once it is ready; `seconds` since the restore began.
 */
export interface StateEvent {
  type: 'progress' | 'restored';
  topic: string;
  partition: number;
  records: number;
  seconds: number;
}

export const RERUN_RESULTS = ['changed', 'unchanged', 'failed', 'superseded'] as const;
export type RerunResult = (typeof RERUN_RESULTS)[number];

/**
 * A rerun's work on this replica: `chunk` after a chunk of a partition's share is recorded
 * (its partners by result, the share's partners read so far of its total, whether it is
 * done); `left` when the share stops running here, whatever the reason (done, the partition
 * moved, stopping, canceled, died); `quota` when quota was consumed for a rerun's bulk.
 */
export type RerunEvent =
  | {
      type: 'chunk';
      jobId: string;
      partition: number;
      results: Record<RerunResult, number>;
      read: number;
      total: number;
      done: boolean;
    }
  | { type: 'left'; jobId: string; partition: number }
  | { type: 'quota'; tasks: number };

export interface EventChannel<Event> {
  readonly name: string;
  /** Check before building an expensive event. */
  readonly hasSubscribers: boolean;
  publish(event: Event): void;
  /** Returns the function that unsubscribes. */
  subscribe(listener: (event: Event) => void): () => void;
}

function eventChannel<Event>(name: string): EventChannel<Event> {
  const channel = diagnosticsChannel.channel(name);
  return {
    name,
    get hasSubscribers() {
      return channel.hasSubscribers;
    },
    publish: (event) => {
      if (channel.hasSubscribers) channel.publish(event);
    },
    subscribe: (listener) => {
      const onMessage = (message: unknown) => listener(message as Event);
      diagnosticsChannel.subscribe(name, onMessage);
      return () => {
        diagnosticsChannel.unsubscribe(name, onMessage);
      };
    },
  };
}

export const pipelineEvents = {
  records: eventChannel<RecordsEvent>(CHANNEL_NAMES.records),
  bulk: eventChannel<BulkEvent>(CHANNEL_NAMES.bulk),
  quota: eventChannel<QuotaEvent>(CHANNEL_NAMES.quota),
  intake: eventChannel<IntakeEvent>(CHANNEL_NAMES.intake),
  http: eventChannel<HttpEvent>(CHANNEL_NAMES.http),
  retry: eventChannel<RetryEvent>(CHANNEL_NAMES.retry),
  lag: eventChannel<LagEvent>(CHANNEL_NAMES.lag),
  state: eventChannel<StateEvent>(CHANNEL_NAMES.state),
  rerun: eventChannel<RerunEvent>(CHANNEL_NAMES.rerun),
} as const;
