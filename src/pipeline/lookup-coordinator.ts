// Lookup coordination: what happens to a partner's work once it is its turn. Unchanged
// content reuses the stored match; work already paid for (found in the ledger) resumes
// its bulk; the rest is batched, paid for through the quota gate, submitted, settled into
// outputs or retried. Work whose partition was revoked is dropped wherever it is met, so
// the former owner pays for nothing its successor reads again.
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import type { BulkTaskResult } from '../bulk/bulk-api.ts';
import type { BulkLedger, LedgerTask } from '../bulk/bulk-ledger.ts';
import type { BulkRunner } from '../bulk/bulk-runner.ts';
import { BulkError } from '../bulk/errors.ts';
import { isPartnerEnrichError, type PartnerEnrichError } from '../errors.ts';
import type { JsonRecord } from '../mapping/lookup-task.ts';
import type { QuotaGate } from '../quota/quota-gate.ts';
import { backoffDelay, type BackoffOptions } from '../retry/backoff.ts';
import type { PartnerState } from '../state/partner-state.ts';
import { Batcher } from './batcher.ts';
import { PipelineError, isFatal, isServiceFault } from './errors.ts';
import { KeyScheduler } from './key-scheduler.ts';
import type { OutputWriter } from './output-writer.ts';
import {
  alreadyFinished,
  alreadyWritten,
  deadLetter,
  deleteOutputs,
  failedOutputs,
  inputOf,
  matchedOutputs,
  reusedOutputs,
  rerunOutcome,
  sameStored,
  tombstoneOf,
  type EmitContext,
  type InputIdentity,
  type StoredPartner,
  type Thresholds,
} from './outputs.ts';
import type { Ownership } from './ownership.ts';
import type { PipelineObserver } from './ports.ts';
import {
  ofContent,
  partitionOf,
  type PartnerWork,
  type RerunOutcome,
  type SubmittedTask,
} from './records.ts';
import { eachInTurns, RERUN_SLICE } from './rerun-work.ts';
import type { RerunQuota } from '../quota/rerun-quota.ts';
import { traceBulkLookup } from '../observability/tracing.ts';

export interface LookupOptions {
  maxTasks: number;
  /** Most tasks in a rerun's bulk: a bulk is settled, and its results read, in one piece. */
  rerunMaxTasks: number;
  lingerMs: number;
  maxConcurrentBulks: number;
  skipUnchanged: boolean;
  retry: BackoffOptions & { maxAttempts: number };
  thresholds: Thresholds;
  /** How long an intent stands unrenewed before another member takes it for abandoned. */
  submissionLeaseMs: number;
  /**
   * The client's time-out of one request. A create that timed out may have been made: each
   * retry after one waits twice as long (up to 16 times this), so that a slow service's answer
   * arrives at last instead of every retry making, and paying for, another bulk.
   */
  requestTimeoutMs?: number;
}

export interface LookupParts {
  runner: BulkRunner;
  ledger: BulkLedger;
  quota?: QuotaGate;
  /** The part of the quota reruns may take; without it reruns consume through `quota` like live work. */
  rerunQuota?: RerunQuota;
  /** Latest stored state per partner, per input partition. */
  state: PartnerState;
  ownership: Ownership;
  writer: OutputWriter;
  observer: PipelineObserver;
  context: EmitContext;
  /** The work's records are finished: their outputs are durable. */
  finished(work: PartnerWork): void;
  /** A failure the pipeline cannot go on after (a bug: an error without a code of ours). */
  fail(error: Error): void;
  /** This member's id in its consumer group, written into its intents. */
  member?: () => string | undefined;
  /** The group's members now: an intent whose writer is not among them is abandoned. */
  groupMembers?: () => Promise<Set<string>>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How much longer than one request a create's retries after time-outs may wait, at most. */
const MAX_CREATE_TIMEOUT_FACTOR = 16;

/** The tasks a consume pays for (the first `units` unpaid, as #cutToGranted keeps them) are no longer live work's to replace. */
const claim = (works: PartnerWork[], units: number): void => {
  for (const work of works.filter((w) => !w.prepaid).slice(0, units)) delete work.awaitingQuota;
};

const ledgerTask = (work: PartnerWork): LedgerTask => ({
  taskId: work.id,
  hash: work.hash as string,
  positions: work.records.map((r) => r.input.position),
  // Paid before (adopted from a dead member's paid intent, or a create that failed): the
  // intent says so from its first write, before the rest of the bulk is paid for. It takes
  // the records from the intent their unit was paid under; said only by the paid intent
  // written after the consume, a kill in between left an adopter an unpaid intent, and the
  // unit was consumed again (kill-coalescing chaos: 3,738 units for 3,737 tasks).
  ...(work.prepaid ? { paid: true } : {}),
});

export class LookupCoordinator {
  readonly #parts: LookupParts;
  readonly #options: LookupOptions;
  readonly #scheduler: KeyScheduler;
  readonly #batcher: Batcher;
  /** Reruns' work goes in bulks of its own, paid under the rerun's share of the quota. */
  readonly #rerunBatcher: Batcher;
  readonly #bulkLimit: ReturnType<typeof pLimit>;
  readonly #rerunBulkLimit: ReturnType<typeof pLimit>;
  readonly #retryTimers = new Set<NodeJS.Timeout>();
  readonly #submissions = new Set<Promise<unknown>>();
  /** Submissions this process works on now, and the member ids it wrote intents under. */
  readonly #submitting = new Set<string>();
  readonly #ownerIds = new Set<string>();
  /** Closed while the group rebalances: no new bulk is paid for until ownership is known. */
  #hold: PromiseWithResolvers<undefined> | undefined;
  #stopped = false;

  constructor(parts: LookupParts, options: LookupOptions) {
    this.#parts = parts;
    this.#options = options;
    this.#scheduler = new KeyScheduler((work) => this.#dispatch(work));
    this.#bulkLimit = pLimit(options.maxConcurrentBulks);
    this.#rerunBulkLimit = pLimit(options.maxConcurrentBulks);
    const batcher = (limit: ReturnType<typeof pLimit>, maxTasks: number) =>
      new Batcher({ maxTasks, lingerMs: options.lingerMs }, (queued) => {
        // Versions that joined work while it waited here may have brought its content back to
        // the stored one (a change, then its revert): answered from the storage as at dispatch.
        const batch = queued.filter(
          (work) => !this.#owned(work) || !this.#reused(work, work.storedAtDispatch),
        );
        if (batch.length === 0) return;
        // Replaceable by live work until their consume is asked for (#submit's claim).
        for (const work of batch) if (work.rerun && !work.prepaid) work.awaitingQuota = true;
        const lookup = limit(() => traceBulkLookup(batch, () => this.#lookup(batch)));
        this.#submissions.add(lookup);
        void lookup.finally(() => this.#submissions.delete(lookup));
      });
    this.#batcher = batcher(this.#bulkLimit, options.maxTasks);
    this.#rerunBatcher = batcher(this.#rerunBulkLimit, options.rerunMaxTasks);
  }

  get coalesced(): number {
    return this.#scheduler.coalesced;
  }

  /** Takes a partner's work; it goes when no earlier work of the partner is active. */
  schedule(work: PartnerWork): void {
    this.#scheduler.offer(work);
  }

  /**
   * Takes a rerun's work for a stored partner. Live work comes first: the copy of a partner
   * with live work under way waits behind it and is superseded at its turn if that work stored
   * a newer version (not if it was answered from the storage), and live work arriving while
   * the copy waits replaces it (see KeyScheduler).
   */
  scheduleRerun(work: PartnerWork): void {
    const rerun = work.rerun as NonNullable<PartnerWork['rerun']>;
    if (!this.#owned(work)) return rerun.settle({ kind: 'dropped' });
    this.#scheduler.offer(work);
  }

  /** Sends the partly filled bulk now, and what arrives after it without waiting (draining, stopping). */
  drain(): void {
    this.#batcher.drain();
    this.#rerunBatcher.drain();
  }

  /** The group is rebalancing: bulks not yet paid for wait until release(). */
  hold(): void {
    this.#hold ??= Promise.withResolvers<undefined>();
  }

  release(): void {
    this.#hold?.resolve(undefined);
    this.#hold = undefined;
  }

  /** Forgets the waiting work of partitions no longer owned; work in flight is dropped when met. */
  dropStale(): void {
    this.#scheduler.drop((work) => !this.#owned(work));
  }

  /** Stops everything not yet paid for; waits for submissions under way to be recorded. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.release();
    this.#parts.quota?.close();
    this.#parts.rerunQuota?.close();
    this.#batcher.close();
    this.#rerunBatcher.close();
    for (const timer of this.#retryTimers) clearTimeout(timer);
    this.#parts.runner.close();
    await Promise.allSettled([...this.#submissions]);
  }

  /** Whether the work is still this member's to do: its partition not revoked, not superseded. */
  #owned(work: PartnerWork): boolean {
    return !work.superseded && this.#parts.ownership.owns(partitionOf(work), work.epoch);
  }

  #finish(work: PartnerWork, rerunOutcome?: RerunOutcome): void {
    if (!this.#owned(work)) return;
    if (work.rerun) work.rerun.settle(rerunOutcome ?? { kind: 'dropped' });
    else this.#parts.finished(work);
    this.#scheduler.complete(work);
  }

  /** Lookup work waits for its bulk: live and rerun work in bulks of their own. */
  #queue(work: PartnerWork): void {
    (work.rerun ? this.#rerunBatcher : this.#batcher).add(work);
  }

  /**
   * Hands the outputs to the writer; `then` runs once they are durable, unless dead letters
   * went out in their place (too large). What a record became is counted there: counted when
   * handed over, a record whose outputs became dead letters was counted twice, and one left
   * unwritten by a stop without grace counted as done.
   */
  #write(
    work: PartnerWork,
    messages: Parameters<OutputWriter['write']>[0],
    then: () => void = () => {},
    rerunOutcome?: RerunOutcome,
  ) {
    if (this.#stopped || !this.#owned(work)) return;
    this.#parts.writer.write(
      messages,
      work.records.map((r) => r.input),
      (written) => {
        // Outputs too large for their topics went out as dead letters: the state they would
        // have stored was never written to the storage topic, and must not be kept either.
        if (written) then();
        this.#finish(work, rerunOutcome);
      },
      () => this.#owned(work),
    );
  }

  #dispatch(work: PartnerWork): void {
    if (!this.#owned(work)) return;
    const { state, observer, context } = this.#parts;
    const partition = partitionOf(work);
    const previous = state.get(partition, work.partnerId);
    work.storedAtDispatch = previous;
    // Live work stored a newer version after the rerun read this one: that version stands.
    if (work.rerun && !sameStored(work.rerun.previous, previous))
      return this.#finish(work, { kind: 'superseded' });
    if (work.kind === 'delete') {
      if (!previous) {
        // Read again after a crash or by the partition's next owner, its delete done and its
        // position not committed: as a record whose outputs were written (alreadyWritten).
        if (alreadyFinished(work, state.finishedBy(partition, work.partnerId))) {
          observer.redelivered?.(work.records.length);
          return this.#finish(work);
        }
        const error = new PipelineError(
          'DELETE_UNKNOWN_PARTNER',
          `tombstone for partner ${work.partnerId}, which the storage does not know`,
        );
        const input = (work.records[0] as PartnerWork['records'][number]).input;
        return this.#write(work, [deadLetter(input, 'mapping', error, 1, context.now())], () =>
          observer.deadLetter?.('mapping', error.code),
        );
      }
      // A delete is an outcome of its own: left uncounted, the records read outnumbered the
      // records written by the tombstones (the demo's summary rows did not add up).
      return this.#write(work, deleteOutputs(work, previous, context), () => {
        state.delete(partition, work.partnerId, tombstoneOf(work));
        for (const _ of work.records) observer.recordOut?.('DELETED', false);
      });
    }
    if (
      alreadyWritten(work, previous) ||
      alreadyFinished(work, state.finishedBy(partition, work.partnerId))
    ) {
      observer.redelivered?.(work.records.length);
      return this.#finish(work);
    }
    if (work.resumeFrom) {
      void this.#resume(work, work.resumeFrom);
      return;
    }
    if (!this.#reused(work, previous)) this.#queue(work);
  }

  /** Skip-unchanged: content whose result the storage holds is answered from it; false if not. */
  #reused(work: PartnerWork, previous: StoredPartner | undefined): boolean {
    if (
      !this.#options.skipUnchanged ||
      work.rerun ||
      work.replacedRerun ||
      !previous ||
      !ofContent(work, previous.hash) ||
      previous.outcome === 'FAILED'
    )
      return false;
    const { observer, context } = this.#parts;
    this.#write(work, reusedOutputs(work, previous, context), () => {
      for (const _ of work.records) observer.recordOut?.(previous.outcome, true);
    });
    return true;
  }

  async #lookup(batch: PartnerWork[]): Promise<void> {
    let started: number | undefined;
    let works: PartnerWork[] = [];
    let submissionId: string | undefined;
    let bulkId: string | undefined;
    try {
      bulkId = await this.#submit(batch, (paidFor, id) => {
        works = paidFor;
        submissionId = id;
        started = Date.now();
      });
      if (!bulkId) return;
      const results = await this.#parts.runner.collect(bulkId);
      this.#parts.observer.bulkFinished?.(bulkId, works.length, Date.now() - (started ?? Date.now()));
      await this.#settleAll(works, bulkId, results);
    } catch (error) {
      const failure = this.#known(error);
      if (!failure) return;
      if (started !== undefined)
        this.#parts.observer.bulkFailed?.(works.length, failure.code, Date.now() - started);
      if (bulkId && failure.code === 'REFDATA_NOT_FOUND') return this.#bulkGone(works, failure);
      if (bulkId && submissionId && failure.canRetry && failure.code !== 'BULK_FAILED') {
        // Created and paid for: its results are read again later, it is never submitted again.
        const created = { submissionId, bulkId };
        for (const work of works)
          this.#retryOrFail(work, failure, { ...created, taskId: work.id, hash: work.hash as string });
        return;
      }
      for (const work of works.length > 0 ? works : batch) this.#retryOrFail(work, failure);
    }
  }

  /**
   * Pays for and submits the batch's live work; resolves with the bulk id once the ledger has
   * it, or undefined when nothing was left to pay for. Waits while the group rebalances, and
   * leaves out work whose partition was revoked or that another member submitted meanwhile
   * (it resumes that submission instead). The intent is recorded before the quota is consumed
   * and renewed until the bulk is recorded, so that neither a kill nor a rebalance in between
   * makes anyone pay for the same records again. When the quota grants less than the batch
   * needs (a window smaller than a bulk), the bulk is cut to what was granted and the rest
   * waits for the next one. A create that fails for a transient reason is tried again under
   * the quota already consumed for it.
   */
  async #submit(
    batch: PartnerWork[],
    paying: (works: PartnerWork[], submissionId: string) => void,
  ): Promise<string | undefined> {
    await this.#hold?.promise;
    for (const work of [...batch]) if (this.#recorded(work)) batch.splice(batch.indexOf(work), 1);
    let works = batch.filter((work) => this.#owned(work));
    if (works.length === 0) return undefined;
    const { ledger, quota, runner, observer } = this.#parts;
    const submissionId = randomUUID();
    const leaseMs = this.#options.submissionLeaseMs;
    let paid = false;
    const intend = () => {
      const owner = this.#parts.member?.();
      if (owner) this.#ownerIds.add(owner);
      return ledger.intend(submissionId, works.map(ledgerTask), { leaseMs, paid, owner });
    };
    this.#submitting.add(submissionId);
    const renewal = setInterval(() => void intend().catch(() => {}), leaseMs / 3);
    try {
      await intend();
      let granted: number;
      try {
        const unpaid = () =>
          (works = works.filter((work) => this.#owned(work))).filter((w) => !w.prepaid).length;
        const rerun = works[0]?.rerun;
        const { rerunQuota } = this.#parts;
        granted =
          rerun && rerunQuota
            ? await rerunQuota.acquire(unpaid, rerun.quotaShare, (units) => claim(works, units))
            : quota
              ? await quota.acquire(unpaid)
              : unpaid();
      } catch (error) {
        await ledger.abandon(submissionId).catch(() => {});
        throw error;
      }
      works = this.#cutToGranted(works, granted);
      // Paid for is submitted, also while stopping (stop waits for it): quota spent on a bulk
      // that is never created would be paid again after the restart.
      if (works.length === 0) {
        await ledger.abandon(submissionId);
        return undefined;
      }
      // Every task left is paid for now (granted, or paid before): whoever adopts this intent
      // (this process died) knows not to consume it again.
      paid = true;
      await intend();
      for (const work of works) {
        work.attempts += 1;
        work.prepaid = true;
      }
      paying(works, submissionId);
      observer.bulkSubmitted?.(works.length);
      const tasks = works.map((work) => ({ ...ledgerTask(work), jsonRecord: work.jsonRecord as JsonRecord }));
      let timeoutMs: number | undefined;
      for (let attempt = 1; ; attempt += 1) {
        try {
          const bulkId = await runner.submit(submissionId, tasks, timeoutMs);
          // The quota paid for this bulk is used up; a retry after a FAILED task pays anew.
          for (const work of works) work.prepaid = false;
          return bulkId;
        } catch (error) {
          const failure = this.#known(error);
          if (!failure || !isServiceFault(failure) || this.#stopped) throw error;
          timeoutMs = this.#longerCreate(failure, timeoutMs);
          observer.retry?.(failure.code, attempt);
          await sleep(backoffDelay(attempt, this.#options.retry));
        }
      }
    } finally {
      clearInterval(renewal);
      this.#submitting.delete(submissionId);
    }
  }

  /** The time-out of a create's next attempt: twice the last after a time-out (see requestTimeoutMs). */
  #longerCreate(failure: PartnerEnrichError, timeoutMs: number | undefined): number | undefined {
    const base = this.#options.requestTimeoutMs;
    if (base === undefined || failure.code !== 'REFDATA_TIMEOUT') return timeoutMs;
    return Math.min(2 * (timeoutMs ?? base), MAX_CREATE_TIMEOUT_FACTOR * base);
  }

  /** Whether the writer of an intent still works on it (in the group, not orphaned here); undefined where unknown. */
  async #alive(owner: string, submissionId: string): Promise<boolean | undefined> {
    // Written here: alive while this process still works on it. One whose submission ended
    // without recording or withdrawing it (both writes failed) would be waited for forever.
    if (this.#ownerIds.has(owner)) return this.#submitting.has(submissionId);
    const { groupMembers } = this.#parts;
    return groupMembers ? (await groupMembers()).has(owner) : undefined;
  }

  /** Keeps what the quota granted (work paid before first); the rest waits for the next bulk. */
  #cutToGranted(works: PartnerWork[], granted: number): PartnerWork[] {
    const prepaid = works.filter((work) => work.prepaid);
    const unpaid = works.filter((work) => !work.prepaid);
    for (const work of unpaid.slice(granted)) this.#queue(work);
    return [...prepaid, ...unpaid.slice(0, granted)];
  }

  /**
   * A failure with a code of the product's that a record can be retried or dead-lettered for.
   * Anything else (a bug, the state topic gone for good) fails the pipeline: nothing is
   * committed, the records are read again after a restart.
   */
  #known(error: unknown): PartnerEnrichError | undefined {
    if (isPartnerEnrichError(error) && !isFatal(error)) return error;
    this.#parts.fail(error as Error);
    return undefined;
  }

  /** Someone submitted this content after it was read (or is about to): follow that submission. */
  #recorded(work: PartnerWork): boolean {
    // Work that was looked up, resumed or adopted before knows its bulk already; its retry is
    // a new lookup.
    if (work.attempts > 0 || work.prepaid || work.adopted) return false;
    for (const { input } of work.records) {
      const submitted = this.#parts.ledger.find(input.position);
      if (submitted && ofContent(work, submitted.hash)) {
        void this.#resume(work, submitted);
        return true;
      }
    }
    return false;
  }

  /**
   * Reads the results of a submission made before (by an earlier run or another member). An
   * intent is waited for first: until its bulk is recorded, it is withdrawn (look up anew), or
   * its lease ran out (its submitter died): look up anew, consuming quota only where the intent
   * does not say it was consumed already.
   */
  async #resume(work: PartnerWork, submitted: SubmittedTask): Promise<void> {
    delete work.resumeFrom;
    work.state = 'submitted';
    let { bulkId } = submitted;
    if (bulkId === undefined) {
      const { position } = (work.records[0] as PartnerWork['records'][number]).input;
      await this.#parts.ledger.settled(position, submitted.submissionId, (owner) =>
        this.#alive(owner, submitted.submissionId),
      );
      if (this.#stopped || !this.#owned(work)) return;
      const now = this.#parts.ledger.find(position);
      if (now?.submissionId === submitted.submissionId && now.bulkId !== undefined) bulkId = now.bulkId;
      else {
        // Withdrawn (look up anew) or abandoned by its writer (adopted: paid for already if it
        // says so). Either way this work asks the ledger no more, and goes through
        // skip-unchanged first: a re-send folded into the same intent as an earlier version
        // finds that version's result stored by now.
        if (now?.submissionId === submitted.submissionId) {
          // The intent paid one unit per task, for the task's content. An older version
          // coalesced into it, read here in a work of its own, is looked up for its own
          // content and pays: the unit stays with the work that carries the task's content
          // (both drew it, and two tasks went to the service on one unit).
          work.prepaid = now.paid === true && ofContent(work, now.hash);
          this.#parts.observer.intentAdopted?.(work.records.length, work.prepaid);
        }
        work.adopted = true;
        this.#dispatch(work);
        return;
      }
    }
    // The result is the one of the content the submission was for (the newest of a coalesced
    // task): that is what the storage records. The work's own content, perhaps recorded by
    // the earlier hash, is stored by its hash of today.
    if (!ofContent(work, submitted.hash)) {
      work.hash = submitted.hash;
      delete work.earlierHash;
    }
    // Reading an earlier run's bulk counts as an attempt: a FAILED task in it, or a bulk the
    // service no longer knows, is retried as a new lookup within the same budget.
    work.attempts += 1;
    try {
      const results = await this.#parts.runner.resume(bulkId);
      this.#settle(work, bulkId, results.get(submitted.taskId));
    } catch (error) {
      const failure = this.#known(error);
      if (!failure) return;
      if (failure.code === 'REFDATA_NOT_FOUND') return this.#bulkGone([work], failure);
      const again = failure.code === 'BULK_FAILED' ? undefined : { ...submitted, bulkId };
      this.#retryOrFail(work, failure, again);
    }
  }

  /**
   * Settles a bulk's work into outputs. A rerun's bulk goes a slice at a time, each in a turn
   * of the event loop of its own: settled at once, a bulk of 500 held the loop for about
   * 100 ms (stored state read, outputs built and encoded per partner), and every live
   * record's lookup answer, fetch and acknowledgement waited behind it (benchmark rerun: live
   * p95 2.6x of the same load without a rerun).
   */
  async #settleAll(
    works: PartnerWork[],
    bulkId: string,
    results: Map<string, BulkTaskResult>,
  ): Promise<void> {
    await eachInTurns(works, works[0]?.rerun ? RERUN_SLICE : works.length, (work) =>
      this.#settle(work, bulkId, results.get(work.id)),
    );
  }

  #settle(work: PartnerWork, bulkId: string, result: BulkTaskResult | undefined): void {
    if (this.#stopped || !this.#owned(work)) return;
    if (!result) {
      return this.#retryOrFail(
        work,
        new BulkError('BULK_TASK_MISSING', `task ${work.id} missing from bulk ${bulkId}`),
      );
    }
    if (result.status === undefined) {
      return this.#failForGood(
        work,
        new PipelineError(
          'TASK_STATUS_MISSING',
          `task ${work.id} of bulk ${bulkId} has a result without a status`,
          { details: { bulkId, taskId: work.id } },
        ),
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
    const { state, observer, context } = this.#parts;
    const partition = partitionOf(work);
    const { messages, stored } = matchedOutputs(
      work,
      result,
      bulkId,
      work.storedAtDispatch,
      this.#options.thresholds,
      context,
    );
    const { rerun } = work;
    if (!rerun) {
      return this.#write(work, messages, () => {
        state.set(partition, work.partnerId, stored);
        for (const _ of work.records) observer.recordOut?.(stored.outcome, false);
      });
    }
    // matchedOutputs marked the stored partner with this lookup's change.
    const outcome = rerunOutcome(rerun.jobId, stored) as RerunOutcome;
    this.#write(
      work,
      messages,
      () => {
        if (!rerun.dryRun) state.set(partition, work.partnerId, stored);
      },
      outcome,
    );
  }

  /**
   * Tries the work again after a backoff, within the attempt budget: as a new lookup, or,
   * when its bulk was created and only reading it failed, by reading that bulk again.
   */
  #retryOrFail(work: PartnerWork, error: PartnerEnrichError, created?: SubmittedTask): void {
    if (this.#stopped || !this.#owned(work)) return;
    // The service being away (5xx, resets, time-outs, 429) is waited out, whatever it takes:
    // only answers about the task itself (FAILED, a failed bulk) spend the record's budget.
    const fault = isServiceFault(error);
    if (!fault) {
      work.failures = (work.failures ?? 0) + 1;
      if (!error.canRetry || work.failures >= this.#options.retry.maxAttempts)
        return this.#failForGood(work, error);
    }
    this.#parts.observer.retry?.(error.code, work.attempts);
    work.state = 'scheduled';
    const timer = setTimeout(
      () => {
        this.#retryTimers.delete(timer);
        if (!this.#owned(work)) return;
        if (created) void this.#resume(work, created);
        else this.#queue(work);
      },
      backoffDelay(Math.max(1, work.attempts), this.#options.retry),
    );
    this.#retryTimers.add(timer);
  }

  /**
   * The service no longer knows a bulk it created (it was restarted, or the bulk expired): its
   * records are looked up anew, the one lookup that costs again, counted. Each time spends one
   * of a record's attempts, so that a service that forgets every bulk cannot make it pay forever.
   */
  #bulkGone(works: PartnerWork[], failure: PartnerEnrichError): void {
    this.#parts.observer.bulkGone?.(works.reduce((sum, work) => sum + work.records.length, 0));
    for (const work of works) {
      if (this.#stopped || !this.#owned(work)) continue;
      work.failures = (work.failures ?? 0) + 1;
      if (work.failures >= this.#options.retry.maxAttempts) this.#failForGood(work, failure);
      else this.#queue(work);
    }
  }

  #failForGood(work: PartnerWork, error: PartnerEnrichError): void {
    if (work.rerun) {
      // The stored state stays; the rerun reports the failure, no record is dead-lettered.
      const reason = `${error.code}: ${error.message}`;
      return this.#write(work, failedOutputs(work, error, this.#parts.context, undefined), () => {}, {
        kind: 'failed',
        reason,
      });
    }
    const { state, observer, context } = this.#parts;
    const partition = partitionOf(work);
    const stored = state.get(partition, work.partnerId);
    this.#write(work, failedOutputs(work, error, context, stored), () => {
      state.lookupFailed(partition, work.partnerId, stored, inputOf(work) as InputIdentity);
      for (const _ of work.records) {
        observer.recordOut?.('FAILED', false);
        observer.deadLetter?.('lookup', error.code);
      }
    });
  }
}
