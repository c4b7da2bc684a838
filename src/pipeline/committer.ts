// Commits source positions: a record's position moves the watermark once its outputs are
// durable; moves are committed once per interval, never for a partition this member no
// longer owns. A commit that fails (the group is rebalancing, the broker is away) is
// tried again at the next interval; the records behind it are safe either way, since an
// uncommitted record is only read again. Once committed, the bulks whose records are all
// behind the committed positions are released from the ledger.
//
// Exactly-once: each partition whose position moved commits one transaction with its
// staged outputs below the position and the position itself; only then does the partner
// state store the writes of those outputs. A fenced transaction (the partition has a newer
// owner) hands the partition back as revoked, and a failed one of a partition that moved
// while it ran (revoked meanwhile, or by the rebalance under way) is left to the partition's
// next owner; any other failed transaction is fatal, since its outputs cannot be sent apart
// from their position and must not be sent twice. A verdict that waits for the rebalance's
// assignment is given at close if the assignment has not come by then. Until its partition is revoked, a partition
// whose transaction failed commits nothing more here: a later transaction would commit a
// position past the failed one's records without their outputs (taken from the staging).
import type { BulkLedger } from '../bulk/bulk-ledger.ts';
import type { BulkRunner } from '../bulk/bulk-runner.ts';
import { isPartnerEnrichError } from '../errors.ts';
import { CommitWatermark, type Committable } from './commit-watermark.ts';
import type { Transactional } from './output-writer.ts';
import type { PartitionRef, PipelineObserver, RecordSource } from './ports.ts';
import type { PartnerState } from '../state/partner-state.ts';
import { positionKey, type SourcePosition } from './records.ts';

export interface CommitterParts {
  source: RecordSource;
  /** Told of each commit: the deletes it remembers below the committed position are forgotten. */
  state: PartnerState;
  ledger: BulkLedger;
  runner: BulkRunner;
  observer: PipelineObserver;
  /** Exactly-once: outputs staged per partition, and what to do when a transaction cannot be. */
  transactional?: Transactional & {
    /** The partition's producer was fenced: the partition is no longer this member's. */
    fenced(partition: PartitionRef, error: Error): void;
    /** A transaction of a partition that moved while it ran failed: its next owner ends it. */
    abandoned(partition: PartitionRef, error: Error): void;
    /** Any other failed transaction of a partition this member holds: the pipeline cannot go on. */
    fail(error: Error): void;
  };
}

const keyOf = (partition: PartitionRef): string => positionKey(partition);

export class Committer {
  readonly watermark = new CommitWatermark();
  readonly #parts: CommitterParts;
  readonly #intervalMs: number;
  /** Moves not yet committed, per partition. */
  #pending = new Map<string, Committable>();
  /** What this member committed, per partition it owns: what the ledger may release. */
  readonly #committed = new Map<string, Committable>();
  #timer: NodeJS.Timeout | undefined;
  #releaseDue = false;
  #flushing: Promise<void> = Promise.resolve();
  /** Revocations per partition: a transaction ended after one no longer speaks for the partition. */
  readonly #revocations = new Map<string, number>();
  /**
   * Partitions whose transaction failed (not fenced) while this member held them: what became
   * of it is for a restart, or the partition's next owner, to find out (see #transaction).
   */
  readonly #failed = new Set<string>();
  /**
   * Verdicts on failed transactions that wait for the assignment after the rebalance under way
   * (rebalancing() to assigned()); undefined while no rebalance is under way.
   */
  #verdicts: (() => void)[] | undefined;
  /** close() was called: no verdict waits any more. */
  #closed = false;

  constructor(parts: CommitterParts, intervalMs: number) {
    this.#parts = parts;
    this.#intervalMs = intervalMs;
  }

  /** Records are finished: their outputs are durable. */
  done(positions: SourcePosition[]): void {
    for (const position of positions) {
      const moved = this.watermark.done(position);
      if (moved) this.#pending.set(keyOf(moved), moved);
    }
    this.#schedule();
  }

  /** A partition is no longer ours: nothing of it is committed here any more. */
  revoke(partition: PartitionRef): void {
    this.watermark.forget(partition);
    this.#pending.delete(keyOf(partition));
    this.#committed.delete(keyOf(partition));
    this.#failed.delete(keyOf(partition));
    this.#revocations.set(keyOf(partition), (this.#revocations.get(keyOf(partition)) ?? 0) + 1);
  }

  /** Resolves when the commits under way (and their transactions) have ended. */
  settled(): Promise<void> {
    return this.#flushing;
  }

  /** Commits what is pending now; never rejects. */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#flushing = this.#flushing.then(() => this.#flush());
    return this.#flushing;
  }

  /**
   * The group rebalances: what is finished is committed now, before the partitions can move
   * (their next owners start from the committed positions).
   */
  rebalancing(): void {
    if (!this.#closed) this.#verdicts ??= [];
    void this.flush();
  }

  /** The assignment is known again; the partitions it no longer holds were revoked before. */
  assigned(): void {
    this.#judge();
  }

  /**
   * The pipeline stops. A verdict waiting for an assignment that may never come (the process
   * leaves the group first) is given now, with what is known: a partition not revoked by then
   * counts as kept, so its failed transaction is fatal and `run` exits non-zero. (It waited for
   * ever, and `run` exited 0.) A transaction failing after this is judged at once.
   */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#judge();
  }

  #judge(): void {
    const due = this.#verdicts ?? [];
    this.#verdicts = undefined;
    for (const verdict of due) verdict();
  }

  #schedule(): void {
    this.#timer ??= setTimeout(() => void this.flush(), this.#intervalMs);
  }

  async #flush(): Promise<void> {
    const positions = [...this.#pending.values()];
    this.#pending = new Map();
    const { transactional } = this.#parts;
    if (transactional) {
      const committed = await Promise.all(positions.map((p) => this.#transaction(transactional, p)));
      const done = positions.filter((_, i) => committed[i]);
      if (done.length > 0) {
        this.#releaseDue = true;
        this.#parts.observer.committed?.(done);
      }
    } else if (positions.length > 0) {
      try {
        await this.#parts.source.commit(positions);
        for (const p of positions) {
          this.#committed.set(keyOf(p), p);
          this.#parts.state.committed(p, p.offset);
        }
        this.#releaseDue = true;
        this.#parts.observer.committed?.(positions);
      } catch (error) {
        this.#parts.observer.commitFailed?.((error as Error).message);
        // Retried with the newest moves, for the partitions still ours (revoke() removed the rest).
        for (const p of positions) {
          const key = keyOf(p);
          if (this.watermark.has(p) && !this.#pending.has(key)) this.#pending.set(key, p);
        }
        this.#schedule();
        return;
      }
    }
    if (this.#releaseDue) await this.#release();
  }

  /** One partition's transaction; resolves whether it committed, never rejects. */
  async #transaction(
    transactional: NonNullable<CommitterParts['transactional']>,
    moved: Committable,
  ): Promise<boolean> {
    const key = keyOf(moved);
    // Its last transaction failed: its outputs were taken from the staging and are in no
    // committed transaction, so no later position of the partition may be committed.
    if (this.#failed.has(key)) return false;
    // Held below the first record of coalesced work still staged; its last record's
    // finishing moves the watermark again, and this partition's next transaction with it.
    const position = { ...moved, offset: transactional.staging.committable(moved, moved.offset) };
    if (position.offset < moved.offset && position.offset <= (this.#committed.get(key)?.offset ?? -1))
      return false;
    const revocations = this.#revocations.get(key) ?? 0;
    const outputs = transactional.staging.take(position, position.offset);
    try {
      await transactional.outputs.commit(position, outputs, position);
    } catch (error) {
      const revoked = () => (this.#revocations.get(key) ?? 0) !== revocations;
      if (!revoked()) {
        this.#failed.add(key);
        // Committed or not, as the broker decided: the state's checkpoint must not pass it.
        transactional.state.uncertain(position);
      }
      if (isPartnerEnrichError(error) && error.code === 'TRANSACTION_FENCED') {
        // Not ours any more (or ours under a newer assignment): its new owner processes it again.
        if (!revoked()) transactional.fenced(position, error);
        return false;
      }
      // A transaction racing the start of the partition's next producer (its next owner's, or
      // this member's under a newer assignment) may fail otherwise than fenced: Kafka 4.4
      // answers a commit that meets the epoch fence with UNKNOWN_SERVER_ERROR. Whatever became
      // of it, that producer's start ends it before the committed position is read, so it is
      // fatal only for a partition this member keeps; during a rebalance (whose flush sends
      // such commits) that is known once the assignment is.
      const judge = () =>
        revoked() ? transactional.abandoned(position, error as Error) : transactional.fail(error as Error);
      if (this.#verdicts) this.#verdicts.push(judge);
      else judge();
      return false;
    }
    // Revoked meanwhile: the outputs and the position are committed all the same, but the
    // state the partition holds now (if any) belongs to a newer assignment.
    if ((this.#revocations.get(key) ?? 0) !== revocations) return false;
    transactional.state.applyStaged(position, position.offset);
    this.#parts.state.committed(position, position.offset);
    this.#committed.set(key, position);
    return true;
  }

  async #release(): Promise<void> {
    try {
      for (const bulkId of await this.#parts.ledger.release([...this.#committed.values()])) {
        this.#parts.runner.forgetResumed(bulkId);
      }
      this.#releaseDue = false;
    } catch (error) {
      // The state topic is away; the entries stay (harmless: they only allow a resume) and
      // their release is tried again at the next interval.
      this.#parts.observer.commitFailed?.(`ledger release: ${(error as Error).message}`);
      this.#schedule();
    }
  }
}
