// Which input partitions this member owns, each with the epoch of its current assignment.
// Work carries the epoch it was read under: once its partition is revoked (or revoked and
// assigned again, when Kafka delivers it anew from the committed offset) the work is stale
// and is dropped wherever it is met, so a former owner neither pays for it nor writes it.
import { positionKey } from './records.ts';
import type { PartitionRef } from './ports.ts';

const keyOf = (partition: PartitionRef): string => positionKey(partition);

export class Ownership {
  readonly #epochs = new Map<string, number>();
  #next = 1;

  assign(partition: PartitionRef): number {
    const epoch = this.#next++;
    this.#epochs.set(keyOf(partition), epoch);
    return epoch;
  }

  revoke(partition: PartitionRef): void {
    this.#epochs.delete(keyOf(partition));
  }

  /** The current epoch of an owned partition; undefined when not owned. */
  epoch(partition: PartitionRef): number | undefined {
    return this.#epochs.get(keyOf(partition));
  }

  owns(partition: PartitionRef, epoch: number): boolean {
    return this.#epochs.get(keyOf(partition)) === epoch;
  }
}
