// The enrichment pipeline's core, the same for Kafka and for files:
//   intake (decode, map; intake.ts) -> lookup coordination (per-key order, coalescing,
//   skip-unchanged, batch, quota, bulk, settle; lookup-coordinator.ts) -> outputs
//   (output-writer.ts) -> commit (committer.ts).
// Every accepted record ends as outputs or dead letters; its source position is
// committed only after that, and after every earlier record of its partition. This file
// wires the stages and follows the source's partition ownership and the pipeline's life.
import type { BulkLedger } from '../bulk/bulk-ledger.ts';
import type { BulkRunner } from '../bulk/bulk-runner.ts';
import { isPartnerEnrichError, type PartnerEnrichError } from '../errors.ts';
import type { LookupTask } from '../mapping/lookup-task.ts';
import type { QuotaGate } from '../quota/quota-gate.ts';
import type { RerunQuota } from '../quota/rerun-quota.ts';
import type { BackoffOptions } from '../retry/backoff.ts';
import type { PartnerDecoder } from '../serde/partner-decoders.ts';
import type { PartnerRecord } from '../serde/partner-record.ts';
import type { PartnerState } from '../state/partner-state.ts';
import { Committer } from './committer.ts';
import { PipelineError } from './errors.ts';
import { FlowControl, type PauseReason } from './flow-control.ts';
import { Intake } from './intake.ts';
import { LookupCoordinator } from './lookup-coordinator.ts';
import { OutputStaging } from './output-staging.ts';
import { OutputWriter, type Transactional } from './output-writer.ts';
import { deadLetter, leastOutputs, type EmitContext, type FailureStage, type Thresholds } from './outputs.ts';
import { Ownership } from './ownership.ts';
import type {
  OutputSink,
  PartitionRef,
  PipelineObserver,
  RecordSource,
  TransactionalOutputs,
} from './ports.ts';
import type { InputRecord, PartnerWork, RerunOutcome, RerunTask } from './records.ts';
import { eachInTurns, RERUN_SLICE, rerunTopic, rerunWork } from './rerun-work.ts';
import type { StoredPartner } from './outputs.ts';

export interface PipelineOptions {
  maxTasks: number;
  rerunMaxTasks: number;
  lingerMs: number;
  maxInFlightRecords: number;
  maxConcurrentBulks: number;
  skipUnchanged: boolean;
  retry: BackoffOptions & { maxAttempts: number };
  thresholds: Thresholds;
  storageId: string;
  /** How often watermark moves are committed to the source. */
  commitIntervalMs: number;
  /** How long a submission intent stands unrenewed before another member takes it for abandoned. */
  submissionLeaseMs: number;
  /** The reference data client's time-out of one request: a timed-out create's retries wait longer. */
  requestTimeoutMs?: number;
  /** How often the partner state's checkpoints move (and at stop); 10 s when unset. */
  stateCheckpointIntervalMs?: number;
  /**
   * Exactly-once: how long a partition fenced without a rebalance may stay idle before the
   * pipeline fails (PARTITION_FENCED); the consumer's session timeout (see #fenced), 30 s when unset.
   */
  fencedIdleMs?: number;
  /** The input is a Kafka topic of more than one partition: records not keyed by their partner id are reported. */
  checkInputKeys?: boolean;
}

export interface PipelineParts {
  source: RecordSource;
  sink: OutputSink;
  decoder: PartnerDecoder;
  toTask: (partner: PartnerRecord) => LookupTask;
  runner: BulkRunner;
  ledger: BulkLedger;
  quota?: QuotaGate;
  /** Reruns' share of the quota (live first); without it reruns consume like live work. */
  rerunQuota?: RerunQuota;
  /** Latest stored state per partner, per input partition: restored on assignment, closed on revocation. */
  state: PartnerState;
  /**
   * Exactly-once (Kafka): outputs of input records go out in one transaction per partition
   * and commit interval, with the position they finish, instead of through `sink`.
   */
  transactions?: TransactionalOutputs;
  observer?: PipelineObserver;
  now?: () => number;
}

/** Partitions as readiness names them: `topic[partition]`, comma-separated. */
const named = (partitions: PartitionRef[]): string =>
  partitions.map((p) => `${p.topic}[${p.partition}]`).join(', ');

export class Pipeline {
  readonly #parts: PipelineParts;
  readonly #checkpointIntervalMs: number;
  readonly #observer: PipelineObserver;
  readonly #context: EmitContext;
  readonly #ownership = new Ownership();
  readonly #flow: FlowControl;
  readonly #committer: Committer;
  readonly #writer: OutputWriter;
  readonly #intake: Intake;
  readonly #lookups: LookupCoordinator;
  readonly #failed = Promise.withResolvers<Error>();
  #fatal: Error | undefined;
  #started = false;
  /**
   * From this member's notice that its group rebalances until its new assignment: it processes
   * nothing meanwhile, so it is not ready (a rollout must not count it as settled).
   */
  #awaitingAssignment = false;
  #checkpoints: NodeJS.Timeout | undefined;
  #stopping = false;
  /** Owned partitions' restores: a rerun reads a partition's state once it is restored. */
  readonly #restored = new Map<string, { ref: PartitionRef; epoch: number; restored: Promise<void> }>();
  readonly #partitionListeners = new Set<() => void>();
  readonly #transactional: Transactional | undefined;
  readonly #fencedIdleMs: number;
  /** Exactly-once: partitions fenced since the last rebalance, each with the timer that fails the pipeline. */
  readonly #fencedIdle = new Map<string, NodeJS.Timeout>();

  constructor(parts: PipelineParts, options: PipelineOptions) {
    this.#parts = parts;
    this.#checkpointIntervalMs = options.stateCheckpointIntervalMs ?? 10_000;
    this.#fencedIdleMs = options.fencedIdleMs ?? 30_000;
    this.#observer = parts.observer ?? {};
    this.#context = { storageId: options.storageId, now: parts.now ?? Date.now };
    this.#flow = new FlowControl(parts.source, this.#observer);
    this.#transactional = parts.transactions
      ? { outputs: parts.transactions, staging: new OutputStaging(), state: parts.state }
      : undefined;
    this.#committer = new Committer(
      {
        source: parts.source,
        state: parts.state,
        ledger: parts.ledger,
        runner: parts.runner,
        observer: this.#observer,
        ...(this.#transactional
          ? {
              transactional: {
                ...this.#transactional,
                fenced: (partition, error) => this.#fenced(partition, error),
                abandoned: (partition, error) =>
                  this.#observer.transactionAbandoned?.(partition, error.message),
                fail: (error) => this.#fail(error),
              },
            }
          : {}),
      },
      options.commitIntervalMs,
    );
    this.#writer = new OutputWriter(
      parts.sink,
      this.#observer,
      (error) => this.#fail(error),
      this.#context.now,
      this.#transactional,
    );
    this.#lookups = new LookupCoordinator(
      {
        runner: parts.runner,
        ledger: parts.ledger,
        ...(parts.quota ? { quota: parts.quota } : {}),
        ...(parts.rerunQuota ? { rerunQuota: parts.rerunQuota } : {}),
        state: parts.state,
        ownership: this.#ownership,
        writer: this.#writer,
        observer: this.#observer,
        context: this.#context,
        finished: (work) => this.#finished(work.records.map((r) => r.input)),
        fail: (error) => this.#fail(unexpected(error)),
        member: () => parts.source.memberId,
        ...(parts.source.groupMembers ? { groupMembers: parts.source.groupMembers.bind(parts.source) } : {}),
      },
      options,
    );
    this.#intake = new Intake(
      {
        decoder: parts.decoder,
        toTask: parts.toTask,
        ledger: parts.ledger,
        watermark: this.#committer.watermark,
        ownership: this.#ownership,
        flow: this.#flow,
        observer: this.#observer,
        schedule: (work) => this.#schedule(work),
        reject: (input, stage, error, epoch) => this.#reject(input, stage, error, epoch),
        fail: (error) => this.#fail(unexpected(error)),
      },
      {
        maxInFlightRecords: options.maxInFlightRecords,
        registryBackoff: options.retry,
        checkKeys: options.checkInputKeys ?? false,
      },
    );
    // A state write that did not reach the disk ends the pipeline when it happens (its commit
    // runs after the write's caller returned): the state is behind its changelog from then on.
    void parts.state.failed.then((error) => this.#fail(error));
  }

  get coalesced(): number {
    return this.#lookups.coalesced;
  }

  get failure(): Error | undefined {
    return this.#fatal;
  }

  /** Resolves with the failure that ended the pipeline; never rejects, never resolves on a clean stop. */
  get failed(): Promise<Error> {
    return this.#failed.promise;
  }

  /** Records taken from the source and not yet finished. */
  get inFlight(): number {
    return this.#intake.inFlight;
  }

  /** The most records ever in flight at once. */
  get peakInFlight(): number {
    return this.#intake.peakInFlight;
  }

  /** Whether the pipeline takes work; the reasons name what is missing. */
  readiness(): { ready: boolean; reasons: string[] } {
    const reasons: string[] = [];
    if (this.#fatal) reasons.push(this.#fatal.message);
    if (!this.#started) reasons.push('pipeline not started');
    if (this.#awaitingAssignment) reasons.push('consumer group rebalancing');
    const unreachable = this.#parts.source.unreachable;
    if (unreachable) reasons.push(unreachable);
    // Each names its partitions: an operator looks at those (their lag, their storage partition).
    const waiting = this.#intake.waitingForRegistry;
    if (waiting.length > 0) reasons.push(`waiting for the schema registry: ${named(waiting)}`);
    const restoring = this.#intake.restoring;
    if (restoring.length > 0)
      reasons.push(`restoring state of newly assigned partitions: ${named(restoring)}`);
    return { ready: reasons.length === 0, reasons };
  }

  async start(): Promise<void> {
    await this.#parts.source.start({
      offer: (record) => this.#intake.offer(record),
      passed: (position) => {
        if (this.#intake.pass(position)) this.#committer.done([position]);
      },
      assigned: (partitions) => this.#assigned(partitions),
      revoked: (partitions) => this.#revoked(partitions),
      rebalancing: () => this.#rebalancing(),
      failed: (error) =>
        this.#fail(
          new PipelineError('PIPELINE_SOURCE_FAILED', `input failed: ${error.message}`, {
            cause: error,
            // The log shows the error's own members only: the source's code would be lost in the cause.
            details: isPartnerEnrichError(error) ? { causeCode: error.code } : {},
          }),
        ),
    });
    this.#started = true;
    this.#checkpoints = setInterval(() => void this.#checkpoint(), this.#checkpointIntervalMs);
    this.#checkpoints.unref();
  }

  /** Resolves when every accepted record is finished (outputs written). */
  async idle(): Promise<void> {
    this.#lookups.drain();
    await Promise.race([this.#intake.idle(), this.#failed.promise]);
  }

  /**
   * Stops intake, waits up to `graceMs` for in-flight work, commits what is done. `closing`
   * hears the name of each step as it begins: a stop that hangs is known by where.
   */
  async stop(graceMs: number, closing: (step: string) => void = () => {}): Promise<{ abandoned: number }> {
    this.#stopping = true;
    this.#clearFencedIdle();
    closing('pausing the input');
    await this.#parts.source.stop();
    if (graceMs > 0 && !this.#fatal) {
      closing('finishing in-flight work');
      this.#lookups.drain();
      await Promise.race([this.idle(), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    }
    // What is not finished now is abandoned: not committed, read again after a restart.
    this.#intake.stop();
    closing('stopping lookups');
    await this.#lookups.stop();
    closing('writing the outputs under way');
    await this.#writer.settled();
    clearInterval(this.#checkpoints);
    // A verdict on a failed transaction still waiting for the assignment is given now (see
    // Committer.close): a failure ends the pipeline, nothing more is committed, `run` exits 1.
    this.#committer.close();
    closing('committing, checkpointing the partner state');
    if (!this.#fatal) await Promise.all([this.#committer.flush(), this.#checkpoint()]);
    closing('closing the input (leaving the consumer group)');
    await this.#parts.source.close();
    return { abandoned: this.#intake.inFlight };
  }

  /** Partitions owned now, with the epoch of their assignment and their state's restore. */
  partitions(): { ref: PartitionRef; epoch: number; restored: Promise<void> }[] {
    return [...this.#restored.values()];
  }

  /** Calls `listener` after every assignment or revocation; returns its removal. */
  onPartitions(listener: () => void): () => void {
    this.#partitionListeners.add(listener);
    return () => this.#partitionListeners.delete(listener);
  }

  /**
   * Looks stored partners of an owned partition up again for a rerun: each promise resolves
   * with the partner's outcome once its outputs are durable, or as dropped when the partition
   * moved away (epoch no longer current) or the pipeline stops first.
   */
  rerun(
    ref: PartitionRef,
    epoch: number,
    partners: { partnerId: string; stored: StoredPartner }[],
    task: Omit<RerunTask, 'partition' | 'previous' | 'settle'>,
  ): Promise<RerunOutcome>[] {
    const outcomes = partners.map(() => Promise.withResolvers<RerunOutcome>());
    // A slice per turn of the event loop (see RERUN_SLICE).
    void eachInTurns(partners, RERUN_SLICE, ({ partnerId, stored }, index) =>
      this.#offerRerun(
        ref,
        epoch,
        partnerId,
        stored,
        task,
        outcomes[index] as PromiseWithResolvers<RerunOutcome>,
      ),
    );
    return outcomes.map((outcome) => outcome.promise);
  }

  /** Maps a stored partner again and schedules its rerun work; its outcome settles `outcome`. */
  #offerRerun(
    ref: PartitionRef,
    epoch: number,
    partnerId: string,
    stored: StoredPartner,
    task: Omit<RerunTask, 'partition' | 'previous' | 'settle'>,
    outcome: PromiseWithResolvers<RerunOutcome>,
  ): void {
    if (this.#stopping || this.#fatal || this.#ownership.epoch(ref) !== epoch)
      return outcome.resolve({ kind: 'dropped' });
    let lookup: LookupTask;
    try {
      lookup = this.#parts.toTask(stored.record);
    } catch (error) {
      // The mapping of the day refuses a record it took before: reported, the state stays.
      return outcome.resolve({ kind: 'failed', reason: (error as Error).message });
    }
    const work = rerunWork(
      ref,
      epoch,
      partnerId,
      stored,
      lookup,
      { ...task, settle: outcome.resolve },
      this.#context.now(),
    );
    this.#lookups.scheduleRerun(work);
  }

  /** A rerun's chunk of this partition is recorded as done: the ledger forgets its bulks. */
  async releaseRerun(jobId: string, partition: number): Promise<void> {
    await this.#parts.ledger.release([
      { topic: rerunTopic(jobId), partition, offset: Number.MAX_SAFE_INTEGER },
    ]);
  }

  /** Something the pipeline's work depends on cannot go on (a rerun's progress cannot be written): it ends. */
  abort(error: Error): void {
    this.#fail(unexpected(error));
  }

  /** Pauses intake for a reason that holds for every partition; resumes when none is left. */
  pause(reason: PauseReason): void {
    this.#flow.pause(reason);
  }

  resume(reason: PauseReason): void {
    this.#flow.resume(reason);
  }

  /**
   * The group rebalances (this member noticed it and is about to join again): no bulk is paid
   * for and no output of an input record is written until the new assignment is known, and
   * what is finished is committed now, before the partitions can move: their new owner starts
   * from the committed offsets.
   */
  #rebalancing(): void {
    // A partition fenced before is the new assignment's to settle (see #fenced).
    this.#clearFencedIdle();
    this.#awaitingAssignment = true;
    this.#lookups.hold();
    this.#writer.hold();
    this.#committer.rebalancing();
  }

  #assigned(partitions: PartitionRef[]): void {
    // Ready again unless the new partitions' restore (below) says otherwise; a member assigned
    // nothing is a standby of the settled group, ready to take partitions at the next rebalance.
    this.#awaitingAssignment = false;
    // A fenced partition the assignment holds is fresh below (its producer's start fences the
    // stray one); one it does not hold has another owner, whose producer start does.
    this.#clearFencedIdle();
    // Revoked partitions were handled before (revoked() comes first): what is held is ours.
    this.#writer.release((partition) => this.#ownership.epoch(partition) !== undefined);
    this.#committer.assigned();
    // The consumer may still join a group round while it leaves; nothing new starts then.
    if (this.#stopping) return;
    const fresh = partitions.filter((p) => this.#ownership.epoch(p) === undefined);
    // Records of a partition new to this member wait until every bulk its former owner
    // recorded is known here, so that they resume those bulks instead of paying again.
    // Going on without them could pay again for those bulks: fatal, as the state's restore is.
    const ledger = fresh.length > 0 ? this.#parts.ledger.caughtUp() : Promise.resolve();
    ledger.catch((error: Error) => this.#fail(unexpected(error)));
    // Exactly-once: the partitions' producers start first, fencing their former owners and
    // ending what those left open; only then are the committed positions (read again) and the
    // storage topic final.
    const fenced = this.#fence(fresh);
    // Their partners' state too: a record processed on a state not restored would be told
    // Created instead of Updated, or looked up again though unchanged.
    // (Only those still ours: a partition revoked meanwhile is restored by its next assignment.)
    const epochs = new Map<PartitionRef, number>();
    const state = fenced.then(() =>
      this.#parts.state.restore(fresh.filter((p) => this.#ownership.epoch(p) === epochs.get(p))),
    );
    state.catch((error: Error) => this.#fail(error));
    const restored = Promise.all([ledger, state]).then(() => {});
    // Flow control first, so that the intake's 'restoring' pause has its partition to act on.
    this.#flow.assigned(partitions);
    for (const partition of fresh) {
      const epoch = this.#ownership.assign(partition);
      epochs.set(partition, epoch);
      this.#intake.assign(partition, epoch, restored);
      this.#restored.set(`${partition.topic}:${partition.partition}`, { ref: partition, epoch, restored });
    }
    if (fresh.length > 0) this.#observer.partitionsAssigned?.(fresh);
    this.#lookups.release();
    if (fresh.length > 0) this.#partitionsChanged();
  }

  async #fence(fresh: PartitionRef[]): Promise<void> {
    const { transactions, source } = this.#parts;
    if (!transactions || fresh.length === 0) return;
    await Promise.all(fresh.map((partition) => transactions.open(partition)));
    await source.rewind?.(fresh);
  }

  /** Lets a restart on the same disk read only what the storage topic got after now. */
  async #checkpoint(): Promise<void> {
    try {
      // Exactly-once: the storage records of a transaction under way are stored once it committed.
      await this.#parts.state.checkpoint(async () => {
        await this.#writer.settled();
        await this.#committer.settled();
      });
    } catch (error) {
      // The state's own failure (its disk) ends the pipeline through state.failed; only the
      // storage topic's offsets not read is tried again at the next interval.
      if (isPartnerEnrichError(error) && error.code === 'STATE_FILE_WRITE_FAILED') return;
      this.#observer.commitFailed?.(`state checkpoint: ${(error as Error).message}`);
    }
  }

  #revoked(partitions: PartitionRef[]): void {
    // Flow control first: what is released below may resume intake, and the source must not be
    // told about partitions it no longer has.
    this.#flow.revoked(partitions);
    for (const partition of partitions) {
      this.#ownership.revoke(partition);
      this.#intake.revoke(partition);
      this.#committer.revoke(partition);
      this.#transactional?.staging.drop(partition);
      void this.#parts.transactions?.close(partition);
    }
    this.#lookups.dropStale();
    this.#parts.state.release(partitions);
    for (const partition of partitions) this.#restored.delete(`${partition.topic}:${partition.partition}`);
    if (partitions.length > 0) {
      this.#observer.partitionsRevoked?.(partitions);
      this.#partitionsChanged();
    }
  }

  /**
   * Exactly-once: the partition's transaction was fenced, so a newer owner (or a newer run of
   * this member) holds it: it is revoked here, and not fetched until the group assigns it again.
   *
   * Fencing may come without any rebalance, though: the broker aborted a transaction that ran
   * past the transaction timeout, or a former owner's producer start landed after this
   * member's during back-to-back rebalances. The partition would then stay unprocessed here
   * for good while the process looks healthy. So unless a rebalance begins, or an assignment
   * comes, within the bound, the pipeline fails (PARTITION_FENCED): the restart's producer
   * start fences the stray producer and the partition is processed from its committed
   * position. The bound is the consumer's session timeout: a member fenced because its
   * partitions moved (a zombie) was left out of the group for missing its heartbeats, and
   * learns that at its next heartbeat (every few seconds, a fraction of the session timeout),
   * then rejoins. A rejoin slower than that ends in a restart: a rebalance more, nothing lost.
   */
  #fenced(partition: PartitionRef, error: Error): void {
    if (this.#ownership.epoch(partition) === undefined) return;
    this.#observer.fenced?.(partition, error.message);
    this.#revoked([partition]);
    this.#parts.source.pause([partition]);
    const key = `${partition.topic}:${partition.partition}`;
    if (this.#stopping || this.#fatal || this.#fencedIdle.has(key)) return;
    const timer = setTimeout(() => {
      this.#fencedIdle.delete(key);
      this.#fail(
        new PipelineError(
          'PARTITION_FENCED',
          `partition ${key} was fenced (${error.message}) and the group did not assign it again ` +
            `within ${this.#fencedIdleMs} ms: another producer holds its transactional id, ` +
            'a restart fences it and processes the partition from its committed position',
          {
            cause: error,
            details: { topic: partition.topic, partition: partition.partition, waitedMs: this.#fencedIdleMs },
          },
        ),
      );
    }, this.#fencedIdleMs);
    timer.unref();
    this.#fencedIdle.set(key, timer);
  }

  #clearFencedIdle(): void {
    for (const timer of this.#fencedIdle.values()) clearTimeout(timer);
    this.#fencedIdle.clear();
  }

  #partitionsChanged(): void {
    for (const listener of this.#partitionListeners) listener();
  }

  /**
   * A lookup whose outputs could never be written, whatever the service answers, is not paid
   * for: its record is dead-lettered at once, for the reason it would be after the lookup.
   */
  #schedule(work: PartnerWork): void {
    const input = (work.records[0] as PartnerWork['records'][number]).input;
    const tooLarge =
      work.kind === 'lookup'
        ? this.#writer.tooLarge(input, () => leastOutputs(work, this.#context))
        : undefined;
    if (tooLarge) this.#reject(input, 'output', tooLarge, work.epoch);
    else this.#lookups.schedule(work);
  }

  #reject(input: InputRecord, stage: FailureStage, error: PartnerEnrichError, epoch: number): void {
    if (!this.#ownership.owns(input.position, epoch)) return;
    this.#writer.write([deadLetter(input, stage, error, 1, this.#context.now())], [input], (written) => {
      // Counted once durable, as the lookups' outcomes are (a dead letter too large for its
      // topic goes out without its bytes, still written).
      if (written) this.#observer.deadLetter?.(stage, error.code);
      if (this.#ownership.owns(input.position, epoch)) this.#finished([input]);
    });
  }

  #finished(inputs: InputRecord[]): void {
    this.#committer.done(inputs.map((input) => input.position));
    this.#intake.finished((inputs[0] as InputRecord).position, inputs.length);
  }

  /** A failure the pipeline cannot go on after: stop taking records, report it once. */
  #fail(error: Error): void {
    if (this.#fatal) return;
    this.#fatal = error;
    this.#clearFencedIdle();
    this.#intake.stop();
    void this.#parts.source.stop().catch(() => {});
    this.#failed.resolve(error);
  }
}

const unexpected = (error: Error): Error =>
  isPartnerEnrichError(error)
    ? error
    : new PipelineError('PIPELINE_UNEXPECTED_ERROR', `unexpected failure (a bug): ${error.message}`, {
        cause: error,
      });
