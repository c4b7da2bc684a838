// Exactly-once: finished work's outputs wait here, per input partition, for their
// partition's next transaction. Each piece of work is staged under the highest input offset
// of its records; a transaction takes only what lies below the partition's commit position
// (every record before it finished), since the records of what lies beyond are read again
// after a crash and would give their outputs a second time. A piece of work that coalesced
// a partner's versions spans offsets: its first record finishes with it and lets the
// watermark pass while its outputs wait for the last, so the position a transaction commits
// is held below any such first record (committable()).
import type { PartitionRef } from './ports.ts';

interface Staged<Prepared> {
  /** The highest input offset of the work's records. */
  offset: number;
  /** The lowest. */
  first: number;
  outputs: Prepared[];
}

const keyOf = (ref: PartitionRef) => `${ref.topic}:${ref.partition}`;

export class OutputStaging<Prepared = unknown> {
  readonly #partitions = new Map<string, Staged<Prepared>[]>();

  /** Stages a piece of work's outputs: `offset` the highest input offset of its records, `first` the lowest. */
  stage(ref: PartitionRef, offset: number, outputs: Prepared[], first = offset): void {
    const list = this.#partitions.get(keyOf(ref)) ?? [];
    list.push({ offset, first, outputs });
    this.#partitions.set(keyOf(ref), list);
  }

  /**
   * The highest position at most `position` that a transaction may commit: below the first
   * record of any work that take(position) would leave staged. Committed past it, that
   * record would not be read again after a crash, and its outputs would be lost with the
   * staging.
   */
  committable(ref: PartitionRef, position: number): number {
    const list = this.#partitions.get(keyOf(ref)) ?? [];
    let at = position;
    // Lowering the position can leave more work staged; at most one pass per piece of work.
    for (let lowered = true; lowered;) {
      lowered = false;
      for (const staged of list)
        if (staged.first < at && staged.offset >= at) {
          at = staged.first;
          lowered = true;
        }
    }
    return at;
  }

  /** Removes and returns, in staging order, the outputs of work whose records are all below `position`. */
  take(ref: PartitionRef, position: number): Prepared[] {
    const list = this.#partitions.get(keyOf(ref));
    if (!list) return [];
    const taken: Prepared[] = [];
    const kept: Staged<Prepared>[] = [];
    for (const staged of list) {
      if (staged.offset < position) taken.push(...staged.outputs);
      else kept.push(staged);
    }
    this.#partitions.set(keyOf(ref), kept);
    return taken;
  }

  /** The partition moved away or its transaction was aborted: nothing of it is sent. */
  drop(ref: PartitionRef): void {
    this.#partitions.delete(keyOf(ref));
  }
}
