// Commits source positions: a record's position moves the watermark once its outputs are
// durable; moves are committed once per interval, never for a partition this member no
// longer owns. A commit that fails (the group is rebalancing, the broker is away) is
// tried again at the next interval; the records behind it are safe either way, since an
// uncommitted record is only read again. Once committed, the bulks whose records are all
// behind the committed positions are released from the ledger.
import type { BulkLedger } from '../bulk/bulk-ledger.ts';
import type { BulkRunner } from '../bulk/bulk-runner.ts';
import { CommitWatermark, type Committable } from './commit-watermark.ts';
import type { PartitionRef, PipelineObserver, RecordSource } from './ports.ts';
import { positionKey, type SourcePosition } from './records.ts';

export interface CommitterParts {
  source: RecordSource;
  ledger: BulkLedger;
  runner: BulkRunner;
  observer: PipelineObserver;
}

const keyOf = (partition: PartitionRef): string => positionKey({ ...partition, offset: 0 });

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
  }

  /** Commits what is pending now; never rejects. */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#flushing = this.#flushing.then(() => this.#flush());
    return this.#flushing;
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    this.#timer ??= setTimeout(() => void this.flush(), this.#intervalMs);
  }

  async #flush(): Promise<void> {
    const positions = [...this.#pending.values()];
    this.#pending = new Map();
    if (positions.length > 0) {
      try {
        await this.#parts.source.commit(positions);
        for (const p of positions) this.#committed.set(keyOf(p), p);
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
