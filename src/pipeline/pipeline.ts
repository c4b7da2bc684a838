// The enrichment pipeline's core, the same for Kafka and for files:
//   decode -> map -> per-key order / coalesce / skip-unchanged -> batch
//   -> quota gate -> bulk lookup -> outputs -> commit watermark.
// Every accepted record ends as outputs or dead letters; its source position is
// committed only after that, and after every earlier record of its partition.
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import type { BulkTaskResult } from '../bulk/bulk-api.ts';
import type { BulkLedger } from '../bulk/bulk-ledger.ts';
import type { BulkRunner } from '../bulk/bulk-runner.ts';
import { BulkError } from '../bulk/errors.ts';
import { PartnerEnrichError, isPartnerEnrichError } from '../errors.ts';
import { MappingError } from '../mapping/errors.ts';
import type { JsonRecord } from '../mapping/lookup-task.ts';
import { contentHash } from '../mapping/lookup-task.ts';
import type { QuotaGate } from '../quota/quota-gate.ts';
import { backoffDelay, type BackoffOptions } from '../retry/backoff.ts';
import type { PartnerDecoder } from '../serde/partner-decoders.ts';
import type { PartnerRecord } from '../serde/partner-record.ts';
import { Batcher } from './batcher.ts';
import { CommitWatermark, type Committable } from './commit-watermark.ts';
import { KeyScheduler } from './key-scheduler.ts';
import {
  deadLetter,
  deleteOutputs,
  failedOutputs,
  matchedOutputs,
  reusedOutputs,
  type EmitContext,
  type FailureStage,
  type OutputMessage,
  type StoredPartner,
  type Thresholds,
} from './outputs.ts';
import type { OutputSink, PipelineObserver, RecordSource } from './ports.ts';
import type { InputRecord, PartnerWork } from './records.ts';

export interface PipelineOptions {
  maxTasks: number;
  lingerMs: number;
  maxInFlightRecords: number;
  maxConcurrentBulks: number;
  skipUnchanged: boolean;
  retry: BackoffOptions & { maxAttempts: number };
  thresholds: Thresholds;
  storageId: string;
  /** How often watermark moves are committed to the source. */
  commitIntervalMs: number;
}

export interface PipelineParts {
  source: RecordSource;
  sink: OutputSink;
  decoder: PartnerDecoder;
  toTask: (partner: PartnerRecord) => JsonRecord;
  runner: BulkRunner;
  ledger: BulkLedger;
  quota?: QuotaGate;
  /** Latest stored state per partner id (loaded from the storage topic at start). */
  storage: Map<string, StoredPartner>;
  observer?: PipelineObserver;
  now?: () => number;
}

export const PIPELINE_ERROR_CODES = [
  /** Outputs could not be written; the pipeline stops without committing, records are read again. */
  'PIPELINE_OUTPUT_FAILED',
  /** A failure without a code of its own (a socket reset, DNS): treated as a transport error, retried. */
  'TRANSPORT_ERROR',
  /** The service reported a task FAILED; retried up to the attempt budget. */
  'TASK_FAILED',
  /** The service rejected a task's input; not retried. */
  'TASK_INVALID_INPUT',
] as const;

export type PipelineErrorCode = (typeof PIPELINE_ERROR_CODES)[number];

export class PipelineError extends PartnerEnrichError<PipelineErrorCode> {}

type PauseReason = 'quota' | 'backpressure';

export class Pipeline {
  readonly #parts: PipelineParts;
  readonly #options: PipelineOptions;
  readonly #observer: PipelineObserver;
  readonly #context: EmitContext;
  readonly #watermark = new CommitWatermark();
  readonly #scheduler: KeyScheduler;
  readonly #batcher: Batcher;
  readonly #bulkLimit: ReturnType<typeof pLimit>;
  readonly #pauses = new Set<PauseReason>();
  readonly #retryTimers = new Set<NodeJS.Timeout>();
  #intake: Promise<void> = Promise.resolve();
  #inFlight = 0;
  #commitTimer: NodeJS.Timeout | undefined;
  #pendingCommits = new Map<string, Committable>();
  #fatal: Error | undefined;
  readonly #failed = Promise.withResolvers<Error>();
  #stopped = false;
  readonly #admissions = new Set<Promise<string>>();
  #idleWaiters: (() => void)[] = [];

  constructor(parts: PipelineParts, options: PipelineOptions) {
    this.#parts = parts;
    this.#options = options;
    this.#observer = parts.observer ?? {};
    this.#context = { storageId: options.storageId, now: parts.now ?? Date.now };
    this.#scheduler = new KeyScheduler((work) => this.#dispatch(work));
    this.#batcher = new Batcher(options, (batch) => void this.#bulkLimit(() => this.#lookup(batch)));
    this.#bulkLimit = pLimit(options.maxConcurrentBulks);
  }

  get coalesced(): number {
    return this.#scheduler.coalesced;
  }

  get failure(): Error | undefined {
    return this.#fatal;
  }

  /** Resolves with the failure that ended the pipeline; never rejects, never resolves on a clean stop. */
  get failed(): Promise<Error> {
    return this.#failed.promise;
  }

  /** Whether the pipeline takes work; the reasons name what is missing. */
  readiness(): { ready: boolean; reasons: string[] } {
    const reasons = this.#fatal ? [this.#fatal.message] : [];
    return { ready: reasons.length === 0, reasons };
  }

  async start(): Promise<void> {
    await this.#parts.source.start((record) => this.accept(record));
  }

  /** Takes one record from the source; resolves once it is decoded and scheduled. */
  accept(input: InputRecord): Promise<void> {
    this.#watermark.track(input.position);
    this.#inFlight += 1;
    this.#observer.recordIn?.();
    if (this.#inFlight >= this.#options.maxInFlightRecords) this.#addPause('backpressure');
    // Decoding is asynchronous (schema lookups); chaining keeps partition order.
    this.#intake = this.#intake.then(() => this.#admit(input));
    return this.#intake;
  }

  /** Resolves when every accepted record is finished (outputs written). */
  async idle(): Promise<void> {
    if (this.#inFlight === 0) return;
    this.#batcher.flush();
    await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Stops intake, waits up to `graceMs` for in-flight work, commits what is done. */
  async stop(graceMs: number): Promise<{ abandoned: number }> {
    await this.#parts.source.stop();
    if (graceMs > 0) {
      this.#batcher.flush();
      await Promise.race([this.idle(), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    }
    // What is not finished now is abandoned: not committed, read again after a restart.
    this.#stopped = true;
    this.#parts.quota?.close();
    this.#batcher.close();
    for (const timer of this.#retryTimers) clearTimeout(timer);
    await Promise.allSettled([...this.#admissions]);
    this.#parts.runner.close();
    await this.#flushCommits();
    await this.#parts.source.close();
    return { abandoned: this.#inFlight };
  }

  async #admit(input: InputRecord): Promise<void> {
    const partnerId = input.key?.toString('utf8') ?? '';
    if (input.value === null) {
      if (!partnerId) {
        const error = new MappingError('MAPPING_MISSING_PARTNER_ID', 'tombstone without a key');
        return this.#rejectInput(input, 'mapping', error);
      }
      return this.#scheduler.offer(this.#work(partnerId, 'delete', { input }));
    }
    let partner: PartnerRecord;
    try {
      partner = await this.#decode(input.value);
    } catch (error) {
      return this.#rejectInput(input, 'decode', asPipelineError(error));
    }
    let jsonRecord: JsonRecord;
    try {
      jsonRecord = this.#parts.toTask(partner);
    } catch (error) {
      return this.#rejectInput(input, 'mapping', asPipelineError(error));
    }
    const work = this.#work(partner.partnerId, 'lookup', { input, partner });
    work.jsonRecord = jsonRecord;
    work.hash = contentHash(jsonRecord);
    const submitted = this.#parts.ledger.find(input.position);
    if (submitted && submitted.hash === work.hash) work.resumeFrom = submitted;
    this.#scheduler.offer(work);
  }

  /** The schema registry being away is no reason to dead-letter a record: wait for it. */
  async #decode(value: Buffer): Promise<PartnerRecord> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.#parts.decoder.decode(value);
      } catch (error) {
        if (!isPartnerEnrichError(error) || !error.canRetry || attempt >= this.#options.retry.maxAttempts * 4)
          throw error;
        this.#observer.retry?.(error.code, attempt);
        await sleep(backoffDelay(attempt, this.#options.retry));
      }
    }
  }

  #work(partnerId: string, kind: PartnerWork['kind'], record: PartnerWork['records'][number]): PartnerWork {
    return { id: randomUUID(), partnerId, kind, records: [record], state: 'scheduled', attempts: 0 };
  }

  #rejectInput(input: InputRecord, stage: FailureStage, error: PartnerEnrichError): void {
    this.#observer.deadLetter?.(stage, error.code);
    void this.#write([deadLetter(input, stage, error, 1, this.#context.now())], () =>
      this.#finishRecords([input]),
    );
  }

  #dispatch(work: PartnerWork): void {
    const previous = this.#parts.storage.get(work.partnerId);
    if (work.kind === 'delete') {
      void this.#write(deleteOutputs(work, previous, this.#context), () => {
        this.#parts.storage.delete(work.partnerId);
        this.#finish(work);
      });
      return;
    }
    if (work.resumeFrom) {
      void this.#resume(work, work.resumeFrom.bulkId, work.resumeFrom.taskId);
      return;
    }
    if (
      this.#options.skipUnchanged &&
      previous &&
      previous.hash === work.hash &&
      previous.outcome !== 'FAILED'
    ) {
      for (const _ of work.records) this.#observer.recordOut?.(previous.outcome, true);
      void this.#write(reusedOutputs(work, previous, this.#context), () => this.#finish(work));
      return;
    }
    this.#batcher.add(work);
  }

  async #lookup(batch: PartnerWork[]): Promise<void> {
    const live = batch.filter((work) => work.state === 'submitted');
    if (live.length === 0) return;
    let started: number | undefined;
    try {
      const bulkId = await this.#submitBulk(live, () => (started = Date.now()));
      const results = await this.#parts.runner.collect(bulkId);
      this.#observer.bulkFinished?.(bulkId, live.length, Date.now() - (started ?? Date.now()));
      for (const work of live) this.#settle(work, bulkId, results.get(work.id));
    } catch (error) {
      const failure = asPipelineError(error);
      if (started !== undefined) this.#observer.bulkFailed?.(live.length, failure.code, Date.now() - started);
      for (const work of live) this.#retryOrFail(work, failure);
    }
  }

  /**
   * Quota, then submission and ledger record, as one step that a stop waits for: quota
   * spent on a bulk that was never submitted, or a bulk submitted but not recorded, would
   * be paid for again after a restart.
   */
  #submitBulk(works: PartnerWork[], onSubmitting: () => void): Promise<string> {
    const admission = (async () => {
      await this.#parts.quota?.acquire(works.length);
      for (const work of works) work.attempts += 1;
      onSubmitting();
      this.#observer.bulkSubmitted?.(works.length);
      return this.#parts.runner.submit(
        works.map((work) => ({
          taskId: work.id,
          jsonRecord: work.jsonRecord as JsonRecord,
          hash: work.hash as string,
          positions: work.records.map((r) => r.input.position),
        })),
      );
    })();
    this.#admissions.add(admission);
    void admission.catch(() => {}).finally(() => this.#admissions.delete(admission));
    return admission;
  }

  async #resume(work: PartnerWork, bulkId: string, taskId: string): Promise<void> {
    delete work.resumeFrom;
    work.state = 'submitted';
    try {
      const results = await this.#parts.runner.resume(bulkId);
      this.#settle(work, bulkId, results.get(taskId));
    } catch (error) {
      // The earlier bulk cannot be read (expired, failed): look the partner up anew.
      this.#retryOrFail(work, asPipelineError(error));
    }
  }

  #settle(work: PartnerWork, bulkId: string, result: BulkTaskResult | undefined): void {
    if (this.#stopped) return;
    if (!result) {
      return this.#retryOrFail(
        work,
        new BulkError('BULK_TASK_MISSING', `task ${work.id} missing from bulk ${bulkId}`),
      );
    }
    if (result.status === 'FAILED') {
      return this.#retryOrFail(
        work,
        new PipelineError('TASK_FAILED', result.message ?? 'task failed', { canRetry: true }),
      );
    }
    if (result.status !== 'OK') {
      return this.#failForGood(
        work,
        new PipelineError('TASK_INVALID_INPUT', result.message ?? `task status ${result.status}`),
      );
    }
    const previous = this.#parts.storage.get(work.partnerId);
    const { messages, stored } = matchedOutputs(
      work,
      result,
      bulkId,
      previous,
      this.#options.thresholds,
      this.#context,
    );
    for (const _ of work.records) this.#observer.recordOut?.(stored.outcome, false);
    void this.#write(messages, () => {
      this.#parts.storage.set(work.partnerId, stored);
      this.#finish(work);
    });
  }

  #retryOrFail(work: PartnerWork, error: PartnerEnrichError): void {
    if (this.#stopped) return;
    if (!error.canRetry || work.attempts >= this.#options.retry.maxAttempts)
      return this.#failForGood(work, error);
    this.#observer.retry?.(error.code, work.attempts);
    work.state = 'scheduled';
    const timer = setTimeout(
      () => {
        this.#retryTimers.delete(timer);
        this.#batcher.add(work);
      },
      backoffDelay(work.attempts, this.#options.retry),
    );
    this.#retryTimers.add(timer);
  }

  #failForGood(work: PartnerWork, error: PartnerEnrichError): void {
    for (const _ of work.records) {
      this.#observer.recordOut?.('FAILED', false);
      this.#observer.deadLetter?.('lookup', error.code);
    }
    void this.#write(failedOutputs(work, error, this.#context), () => this.#finish(work));
  }

  /** Writes outputs; only once they are durable does the work count as finished. */
  async #write(messages: OutputMessage[], then: () => void): Promise<void> {
    if (this.#stopped) return;
    try {
      await this.#parts.sink.send(messages);
    } catch (error) {
      // Not committing is what keeps this safe: the records are read again after a restart.
      this.#fatal ??= new PipelineError(
        'PIPELINE_OUTPUT_FAILED',
        `outputs could not be written: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
      this.#failed.resolve(this.#fatal);
      void this.#parts.source.stop();
      this.#wakeIdle();
      return;
    }
    then();
  }

  #finish(work: PartnerWork): void {
    this.#finishRecords(work.records.map((r) => r.input));
    this.#scheduler.complete(work.partnerId);
  }

  #finishRecords(inputs: InputRecord[]): void {
    for (const input of inputs) {
      const moved = this.#watermark.done(input.position);
      if (moved) this.#pendingCommits.set(`${moved.topic}:${moved.partition}`, moved);
    }
    this.#inFlight -= inputs.length;
    this.#commitTimer ??= setTimeout(() => void this.#flushCommits(), this.#options.commitIntervalMs);
    if (this.#inFlight <= this.#options.maxInFlightRecords / 2) this.#removePause('backpressure');
    if (this.#inFlight === 0) this.#wakeIdle();
  }

  async #flushCommits(): Promise<void> {
    clearTimeout(this.#commitTimer);
    this.#commitTimer = undefined;
    if (this.#pendingCommits.size === 0) return;
    const positions = [...this.#pendingCommits.values()];
    this.#pendingCommits = new Map();
    await this.#parts.source.commit(positions);
    this.#observer.committed?.(positions);
    for (const bulkId of await this.#parts.ledger.release(this.#watermark.committed())) {
      this.#parts.runner.forgetResumed(bulkId);
    }
  }

  #wakeIdle(): void {
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const wake of waiters) wake();
  }

  /** Pauses intake for a reason; the source resumes when no reason is left. */
  pause(reason: PauseReason): void {
    this.#addPause(reason);
  }

  resume(reason: PauseReason): void {
    this.#removePause(reason);
  }

  #addPause(reason: PauseReason): void {
    if (this.#pauses.has(reason)) return;
    this.#pauses.add(reason);
    this.#observer.intakePaused?.(reason);
    if (this.#pauses.size === 1) this.#parts.source.pause();
  }

  #removePause(reason: PauseReason): void {
    if (!this.#pauses.delete(reason)) return;
    this.#observer.intakeResumed?.(reason);
    if (this.#pauses.size === 0) this.#parts.source.resume();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function asPipelineError(error: unknown): PartnerEnrichError {
  if (isPartnerEnrichError(error)) return error;
  // Unknown failures (sockets reset, DNS) are transport errors: worth another try.
  return new PipelineError('TRANSPORT_ERROR', (error as Error)?.message ?? String(error), {
    cause: error,
    canRetry: true,
  });
}
