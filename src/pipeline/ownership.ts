// Which input partitions this member owns, each with the epoch of its current assignment.
// Work carries the epoch it was read under: once its partition is revoked (or revoked and
// assigned again, when Kafka delivers it anew from the committed offset) the work is stale
// and is dropped wherever it is met, so a former owner neither pays for it nor writes it.
import type { PartitionRef } from './ports.ts';

export class Ownership {
  /**
   * Epochs by topic, then partition: asked several times per record, a key string built per
   * ask was about 0.7 % of the pipeline's CPU (profile of the overhead benchmark).
   */
  readonly #epochs = new Map<string, Map<number, number>>();
  #next = 1;

  assign({ topic, partition }: PartitionRef): number {
    const epoch = this.#next++;
    const byPartition = this.#epochs.get(topic) ?? new Map<number, number>();
    byPartition.set(partition, epoch);
    this.#epochs.set(topic, byPartition);
    return epoch;
  }

  revoke({ topic, partition }: PartitionRef): void {
    this.#epochs.get(topic)?.delete(partition);
  }

  /** The current epoch of an owned partition; undefined when not owned. */
  epoch({ topic, partition }: PartitionRef): number | undefined {
    return this.#epochs.get(topic)?.get(partition);
  }

  owns(partition: PartitionRef, epoch: number): boolean {
    return this.epoch(partition) === epoch;
  }
}
