// Per-partition commit watermark: a source position may be committed only when every
// record before it in its partition is done (all of its outputs acknowledged), even
// when bulks finish out of order.
import { positionKey, type SourcePosition } from './records.ts';

interface PartitionTrack {
  topic: string;
  partition: number;
  offsets: number[];
  done: Set<number>;
  head: number;
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

  /** Registers a record in arrival order; records of a partition arrive in offset order. */
  track(position: SourcePosition): void {
    const key = positionKey(position);
    let track = this.#partitions.get(key);
    if (!track) {
      track = { topic: position.topic, partition: position.partition, offsets: [], done: new Set(), head: 0 };
      this.#partitions.set(key, track);
    }
    track.offsets.push(position.offset);
  }

  /** Marks a record done; returns the partition's new commit position if it moved. */
  done(position: SourcePosition): Committable | undefined {
    const track = this.#partitions.get(positionKey(position));
    if (!track) return undefined;
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

  /** Forgets partitions that were revoked; their records may no longer be committed here. */
  forget(topic: string, partition: number): void {
    this.#partitions.delete(positionKey({ topic, partition, offset: 0 }));
  }

  committed(): Committable[] {
    return [...this.#partitions.values()]
      .filter((t) => t.committable !== undefined)
      .map((t) => ({ topic: t.topic, partition: t.partition, offset: t.committable as number }));
  }
}
