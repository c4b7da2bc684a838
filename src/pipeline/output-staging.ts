// Exactly-once: finished work's outputs wait here, per input partition, for their
// partition's next transaction. Each piece of work is staged under the highest input offset
// of its records; a transaction takes only what lies below the partition's commit position
// (every record before it finished), since the records of what lies beyond are read again
// after a crash and would give their outputs a second time.
import type { PartitionRef } from './ports.ts';

interface Staged<Prepared> {
  offset: number;
  outputs: Prepared[];
}

const keyOf = (ref: PartitionRef) => `${ref.topic}:${ref.partition}`;

export class OutputStaging<Prepared = unknown> {
  readonly #partitions = new Map<string, Staged<Prepared>[]>();

  stage(ref: PartitionRef, offset: number, outputs: Prepared[]): void {
    const list = this.#partitions.get(keyOf(ref)) ?? [];
    list.push({ offset, outputs });
    this.#partitions.set(keyOf(ref), list);
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
