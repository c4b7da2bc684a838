// Per-partition commit watermark: a source position may be committed only when every
// record before it in its partition is done (all of its outputs acknowledged), even
// when bulks finish out of order. Each offset counts once, whatever the order of
// arrivals and completions: Kafka delivers records again after a rebalance (from the
// committed offset, also for partitions a member keeps), and those copies must neither
// be processed twice nor stop the watermark.
import { positionKey, type SourcePosition } from './records.ts';
import type { PartitionRef } from './ports.ts';

interface PartitionTrack {
  topic: string;
  partition: number;
  /** Tracked offsets in arrival order, which is ascending within a partition. */
  offsets: number[];
  done: Set<number>;
  head: number;
  /** Highest offset tracked so far; -1 before any. */
  highest: number;
  /** Next offset to commit (last done contiguous offset + 1); undefined before any. */
  committable?: number;
}

export interface Committable {
  topic: string;
  partition: number;
  /** The offset of the next record to read, as Kafka commits it. */
  offset: number;
}

export class CommitWatermark {
  readonly #partitions = new Map<string, PartitionTrack>();

  /**
   * Registers a record in arrival order. Returns false for a record already tracked or
   * already done (a re-delivered copy): the caller drops it, the original stands for it.
   */
  track(position: SourcePosition): boolean {
    const key = positionKey(position);
    let track = this.#partitions.get(key);
    if (!track) {
      const { topic, partition } = position;
      track = { topic, partition, offsets: [], done: new Set(), head: 0, highest: -1 };
      this.#partitions.set(key, track);
    }
    // Offsets only grow within a partition: one not above the highest tracked is a copy.
    if (position.offset <= track.highest) return false;
    track.highest = position.offset;
    track.offsets.push(position.offset);
    return true;
  }

  /** Marks a record done; returns the partition's new commit position if it moved. A second call is ignored. */
  done(position: SourcePosition): Committable | undefined {
    const track = this.#partitions.get(positionKey(position));
    if (!track || track.head >= track.offsets.length) return undefined;
    if (position.offset < (track.offsets[track.head] as number)) return undefined;
    track.done.add(position.offset);
    let moved = false;
    while (track.head < track.offsets.length) {
      const offset = track.offsets[track.head] as number;
      if (!track.done.has(offset)) break;
      track.done.delete(offset);
      track.committable = offset + 1;
      track.head += 1;
      moved = true;
    }
    // Drop the consumed prefix now and then instead of shifting on every record.
    if (track.head > 4096 && track.head * 2 > track.offsets.length) {
      track.offsets = track.offsets.slice(track.head);
      track.head = 0;
    }
    return moved && track.committable !== undefined
      ? { topic: track.topic, partition: track.partition, offset: track.committable }
      : undefined;
  }

  /** Records tracked and not yet done, over all partitions. */
  get pending(): number {
    let count = 0;
    for (const track of this.#partitions.values()) count += track.offsets.length - track.head;
    return count;
  }

  /** Whether records of the partition are tracked here (it was not forgotten). */
  has(partition: PartitionRef): boolean {
    return this.#partitions.has(positionKey(partition));
  }

  /** Forgets a partition that was revoked; its records may no longer be committed here. */
  forget(partition: PartitionRef): void {
    this.#partitions.delete(positionKey(partition));
  }

  committed(): Committable[] {
    return [...this.#partitions.values()]
      .filter((t) => t.committable !== undefined)
      .map((t) => ({ topic: t.topic, partition: t.partition, offset: t.committable as number }));
  }
}
