// Partner state the way Kafka Streams keeps it: one on-disk store per input partition this
// replica owns, changelogged to the compacted storage topic (co-partitioned with the input:
// input partition N's partners live in storage partition N). A partition is restored when
// it is assigned, from its checkpoint up to the end of its changelog partition (a fresh
// disk reads the whole partition, a warm one only the tail), and closed when it moves
// away; its file stays for the next time it comes back.
//
// The pipeline applies its own writes after the storage topic acknowledged them, so the
// store is never ahead of the changelog with anything the changelog does not have; the
// checkpoint only needs to be a lower bound of what the store reflects. Replaying the
// changelog from any such bound in order converges to the latest state per partner.
//
// A delete also keeps the input tombstone behind it (the storage tombstone names it), until
// the input partition's position is committed past it: read again before that, the
// tombstone is known as done rather than taken for one of a partner never stored.
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pipelineEvents } from '../observability/events.ts';
import type { InputIdentity, StoredPartner } from '../pipeline/outputs.ts';
import type { PartitionRef } from '../pipeline/ports.ts';
import { StateError } from './errors.ts';
import { PartitionStore, type StateChange } from './partition-store.ts';
import { lockStateDir } from './state-dir-lock.ts';

export interface ChangelogOffsets {
  /** The first offset still in the partition. */
  low: number;
  /** The offset the next record gets (the end). */
  high: number;
}

/** The storage topic, read back. */
export interface StateChangelog {
  readonly name: string;
  /** Offsets of every partition. */
  offsets(): Promise<Map<number, ChangelogOffsets>>;
  /** How long compaction keeps a tombstone (delete.retention.ms), in ms. */
  tombstoneRetentionMs(): Promise<number>;
  /**
   * Reads each partition from `from` up to `to` (exclusive), handing over its records in
   * order, batch by batch; `next` is the offset after the batch's last record.
   */
  read(
    ranges: { partition: number; from: number; to: number }[],
    apply: (partition: number, changes: StateChange[], next: number) => void,
  ): Promise<void>;
}

export interface PartnerStateOptions {
  /** Where the partition files live; locked by one process at a time. */
  dir: string;
  /** The storage topic to restore from; without it (files), the files alone are the state. */
  changelog?: StateChangelog;
}

interface OpenPartition {
  ref: PartitionRef;
  store: PartitionStore;
  path: string;
  /** Until its restore ends, the file is behind its changelog: no checkpoint may be moved. */
  restoring: boolean;
  /** Exactly-once: writes whose storage records are not committed yet, in write order. */
  staged: { offset: number; change: StateChange }[];
  /** The newest staged write per partner: what get() and finishedBy() answer before the store. */
  latest: Map<string, StateChange>;
  /** Exactly-once: a transaction of unknown outcome failed; the checkpoint stays (uncertain()). */
  uncertain: boolean;
}

export interface RestoreReport {
  partition: PartitionRef;
  /** Changelog records read: the whole partition on a fresh disk, the tail on a warm one. */
  records: number;
  ms: number;
}

/**
 * Changelog records applied per transaction while restoring: random partner ids touch pages
 * all over the file, and a commit per fetched batch (about a thousand records) wrote most of
 * them again each time (500,000 records: 18,000/s at 1,000 per transaction, 41,000/s at
 * 20,000). Until written, each is a decoded partner state with its whole partner record:
 * 20,000 per partition took a restore of 2,000,000 partners to 278 MB RSS; 5,000 gave 179 MB
 * and 43,000/s (docs/BENCHMARKS.md, State).
 */
const RESTORE_TRANSACTION_RECORDS = 5_000;

/**
 * The part of the storage topic's delete.retention.ms a checkpoint is trusted for. Compaction
 * removes a tombstone (with the partner it deleted) once it is older than that, and the log
 * start offset does not move: a file whose checkpoint is older would read a tail without the
 * tombstone and keep the partner. The rest covers the restore's own reading time and this
 * replica's clock against the broker's, whose cleaner decides.
 */
const TRUSTED_SHARE_OF_TOMBSTONE_RETENTION = 0.9;

/**
 * Creates and locks the directory. One that cannot be (a path through a file, no permission,
 * a read-only or full filesystem) is the operator's to fix: said as such, with the system's
 * reason, not as an unexpected failure with a stack.
 */
function usableStateDir(dir: string): () => void {
  try {
    mkdirSync(dir, { recursive: true });
    return lockStateDir(dir);
  } catch (error) {
    if (error instanceof StateError) throw error;
    const systemCode = (error as NodeJS.ErrnoException).code;
    throw new StateError(
      'STATE_DIR_UNUSABLE',
      `state directory ${dir} cannot be used: ${(error as Error).message}`,
      {
        cause: error,
        details: { dir, ...(systemCode ? { systemCode } : {}) },
      },
    );
  }
}

const keyOf = (ref: PartitionRef) => `${ref.topic}:${ref.partition}`;
const fileOf = (ref: PartitionRef) => `${ref.topic.replace(/[^A-Za-z0-9._-]/g, '_')}-${ref.partition}.sqlite`;

export class PartnerState {
  readonly #options: PartnerStateOptions;
  readonly #open = new Map<string, OpenPartition>();
  readonly #unlock: () => void;
  #restored: RestoreReport[] = [];
  #closed = false;
  readonly #failed = Promise.withResolvers<StateError>();
  /** Set while staged() runs: the partition and input offset its writes are staged under. */
  #staging: { key: string; offset: number } | undefined;

  constructor(options: PartnerStateOptions) {
    this.#options = options;
    this.#unlock = usableStateDir(options.dir);
  }

  /**
   * Settles with STATE_FILE_WRITE_FAILED as soon as a write of the pipeline's could not be stored in
   * a partition's file: the state is behind what the storage topic acknowledged, and its owner
   * must stop now, not at the next record that happens to come (perhaps never).
   */
  get failed(): Promise<StateError> {
    return this.#failed.promise;
  }

  /** The restores done so far (most recent last): how much of each changelog was read. */
  get restores(): readonly RestoreReport[] {
    return this.#restored;
  }

  /** Partitions whose state this replica holds now. */
  get partitions(): PartitionRef[] {
    return [...this.#open.values()].map((open) => open.ref);
  }

  /** Partners stored in the partitions held now. */
  get size(): number {
    let size = 0;
    for (const { store } of this.#open.values()) size += store.size;
    return size;
  }

  /** Bytes on disk of the partitions held now. */
  get bytes(): number {
    let bytes = 0;
    for (const { path } of this.#open.values())
      for (const file of [path, `${path}-wal`]) bytes += statSync(file, { throwIfNoEntry: false })?.size ?? 0;
    return bytes;
  }

  /**
   * Opens and restores newly assigned partitions; resolves when every one of them reflects
   * its changelog up to the end it had when the restore began. Rejects with
   * STATE_RESTORE_FAILED: records of a partition are never processed on a state not restored.
   */
  restore(partitions: PartitionRef[]): Promise<void> {
    const fresh = partitions.filter((ref) => !this.#open.has(keyOf(ref)));
    if (fresh.length === 0 || this.#closed) return Promise.resolve();
    return this.#restore(fresh).catch((error: unknown) => {
      for (const ref of fresh) this.#close(ref);
      // Closed while restoring (the process stops): nothing is processed on it any more.
      if (this.#closed) return;
      throw error instanceof StateError
        ? error
        : new StateError('STATE_RESTORE_FAILED', `partner state not restored: ${(error as Error).message}`, {
            cause: error,
            details: { partitions: fresh.map(keyOf) },
          });
    });
  }

  /** The partition moved away: its file is closed (and kept, for a later return). */
  release(partitions: PartitionRef[]): void {
    for (const ref of partitions) this.#close(ref);
  }

  get(ref: PartitionRef, partnerId: string): StoredPartner | undefined {
    const open = this.#open.get(keyOf(ref));
    if (!open) return undefined;
    const staged = open.latest.get(partnerId);
    return staged === undefined ? open.store.get(partnerId) : (staged.stored ?? undefined);
  }

  /**
   * The input record that last finished the partner without a state of its own (the tombstone
   * that deleted it, or the record whose lookup failed for good), while its position is not
   * committed: the same record read again (after a crash, or by the partition's next owner,
   * whose restore read it from the storage record) is a redelivery, not a tombstone of an
   * unknown partner or a lookup to make again.
   */
  finishedBy(ref: PartitionRef, partnerId: string): InputIdentity | undefined {
    const open = this.#open.get(keyOf(ref));
    if (!open) return undefined;
    const staged = open.latest.get(partnerId);
    return staged === undefined ? open.store.finishedBy(partnerId) : staged.finishedBy;
  }

  /**
   * Up to `limit` partners of a held partition in id order, after `after` ('' for the first)
   * and not after `until` where given; none for a partition not held.
   */
  scan(
    ref: PartitionRef,
    after: string,
    limit: number,
    until?: string,
  ): { partnerId: string; stored: StoredPartner }[] {
    return this.#open.get(keyOf(ref))?.store.scan(after, limit, until) ?? [];
  }

  /** Ignored for a partition no longer held: its new owner reads the write from the changelog. */
  set(ref: PartitionRef, partnerId: string, stored: StoredPartner): void {
    this.#write(ref, { partnerId, stored });
  }

  /** `tombstone`: the input record that deleted the partner (see finishedBy()). */
  delete(ref: PartitionRef, partnerId: string, tombstone: InputIdentity): void {
    this.#write(ref, { partnerId, stored: null, finishedBy: tombstone });
  }

  /**
   * The lookup of `input` failed for good: the partner's state stays `stored` (none: none),
   * and `input` is remembered as finished (see finishedBy()).
   */
  lookupFailed(
    ref: PartitionRef,
    partnerId: string,
    stored: StoredPartner | undefined,
    input: InputIdentity,
  ): void {
    this.#write(ref, { partnerId, stored: stored ?? null, finishedBy: input });
  }

  /**
   * The input partition's position is committed at `offset`: the records below it finished
   * without a state are forgotten (they are never read again), so they stay few. Ignored for
   * a partition not held.
   */
  committed(ref: PartitionRef, offset: number): void {
    this.#open.get(keyOf(ref))?.store.forgetFinishedBefore(offset);
  }

  /**
   * Exactly-once: the writes `apply` makes to `ref` are staged under input offset `offset`
   * instead of stored: get() sees them at once (the partner's next record is told Updated,
   * not Created), the store takes them only once the transaction that carries their storage
   * records is committed (applyStaged), and they vanish with the partition (an abort). So the
   * store never holds what the changelog's committed records lack.
   */
  staged(ref: PartitionRef, offset: number, apply: () => void): void {
    this.#staging = { key: keyOf(ref), offset };
    try {
      apply();
    } finally {
      this.#staging = undefined;
    }
  }

  /**
   * Exactly-once: a transaction of the partition failed, and whether the broker committed it
   * is not known here (a commit whose answer was lost). Its storage records may be in the
   * changelog while the store lacks them: the partition's checkpoint stays where it is from
   * now on, so that a restore of the same file reads them. Until the partition is released.
   */
  uncertain(ref: PartitionRef): void {
    const open = this.#open.get(keyOf(ref));
    if (open) open.uncertain = true;
  }

  /** The partition's transaction up to `position` is committed: its staged writes below it are stored. */
  applyStaged(ref: PartitionRef, position: number): void {
    const open = this.#open.get(keyOf(ref));
    if (!open || open.staged.length === 0) return;
    const applied = open.staged.filter((w) => w.offset < position);
    if (applied.length === 0) return;
    open.staged = open.staged.filter((w) => w.offset >= position);
    for (const { change } of applied) this.#store(open, change);
    // A partner's writes come in input order, so those left are its newest, if any.
    const left = new Set(open.staged.map((w) => w.change.partnerId));
    for (const { change } of applied) if (!left.has(change.partnerId)) open.latest.delete(change.partnerId);
  }

  #write(ref: PartitionRef, change: StateChange): void {
    const open = this.#open.get(keyOf(ref));
    if (!open) return;
    if (this.#staging?.key === keyOf(ref)) {
      open.staged.push({ offset: this.#staging.offset, change });
      open.latest.set(change.partnerId, change);
    } else this.#store(open, change);
  }

  #store(open: OpenPartition, { partnerId, stored, finishedBy }: StateChange): void {
    if (stored) open.store.set(partnerId, stored);
    else open.store.delete(partnerId);
    if (finishedBy) open.store.markFinished(partnerId, finishedBy);
  }

  /**
   * Moves the checkpoints of the partitions held to the changelog's end as it is now, once
   * every write started before (`settled`) is applied: the next restore of the same file
   * reads only what comes after. Without a changelog there is nothing to checkpoint. A
   * checkpoint the disk does not take is STATE_FILE_WRITE_FAILED (thrown, and `failed`).
   */
  async checkpoint(settled: () => Promise<void>): Promise<void> {
    const { changelog } = this.#options;
    if (!changelog || this.#open.size === 0) return;
    const held = new Map(this.#open);
    // Read before the end offsets: whatever comes after them is written later.
    const at = Date.now();
    const ends = await changelog.offsets();
    await settled();
    for (const [key, open] of held) {
      // Released meanwhile (and perhaps opened again), still restoring, or behind a
      // transaction of unknown outcome: left alone.
      if (this.#open.get(key) !== open || open.restoring || open.uncertain) continue;
      const end = ends.get(open.ref.partition);
      const current = open.store.checkpoint?.offset ?? 0;
      // Moved in time even when nothing was written: a partition that stays quiet for longer
      // than the topic keeps tombstones is not restored in full for it.
      if (end && end.high >= current)
        open.store.moveCheckpoint({ changelog: changelog.name, offset: end.high, at });
    }
  }

  /** Closes every partition and unlocks the directory. */
  close(): void {
    this.#closed = true;
    for (const ref of this.partitions) this.#close(ref);
    this.#unlock();
  }

  async #restore(fresh: PartitionRef[]): Promise<void> {
    const started = Date.now();
    const opened = fresh.map((ref) => {
      const path = join(this.#options.dir, fileOf(ref));
      const open: OpenPartition = {
        ref,
        store: new PartitionStore(path, (error) => this.#failed.resolve(error)),
        path,
        restoring: true,
        staged: [],
        latest: new Map(),
        uncertain: false,
      };
      this.#open.set(keyOf(ref), open);
      return { ref, open };
    });
    const { changelog } = this.#options;
    const done = () => {
      for (const { open } of opened) open.restoring = false;
    };
    if (!changelog) return done();
    for (const ref of fresh)
      pipelineEvents.state.publish({ type: 'progress', ...ref, records: 0, seconds: 0 });
    const [ends, tombstoneRetentionMs] = await Promise.all([
      changelog.offsets(),
      changelog.tombstoneRetentionMs(),
    ]);
    const trustedSince = started - tombstoneRetentionMs * TRUSTED_SHARE_OF_TOMBSTONE_RETENTION;
    const ranges: { partition: number; from: number; to: number }[] = [];
    const counts = new Map<number, number>();
    /** Per partition, the time its checkpoints get until the restore reaches its end. */
    const readingSince = new Map<number, number>();
    for (const { ref, open } of opened) {
      // Released (revoked, or the process stops) while the offsets were read: nothing to restore.
      if (this.#open.get(keyOf(ref)) !== open) continue;
      const end = ends.get(ref.partition);
      // The input topic got partitions while running (the start checked both counts): the
      // state of this one would go to a storage partition that does not exist, and the
      // producer drops records for unknown partitions without an error. Nothing of the
      // partition may be processed; the restart refuses to start with the same code.
      if (!end) {
        throw new StateError(
          'STATE_NOT_COPARTITIONED',
          `input partition ${ref.topic}:${ref.partition} was assigned, but storage topic ${changelog.name} ` +
            `has ${ends.size} partitions: the input topic's partitions were increased while running. ` +
            'The partner state of input partition N is kept in storage partition N, so both topics need ' +
            'the same number of partitions',
          {
            details: {
              input: ref.topic,
              storage: changelog.name,
              partition: ref.partition,
              storagePartitions: ends.size,
            },
          },
        );
      }
      const checkpoint = open.store.checkpoint;
      let from = checkpoint?.changelog === changelog.name ? checkpoint.offset : 0;
      // A file of another changelog, ahead of this one (the topic was recreated), behind what
      // the topic still has, or older than its tombstones may be: the tail cannot bring it up
      // to date, start over.
      if (
        checkpoint &&
        (checkpoint.changelog !== changelog.name ||
          from > end.high ||
          from < end.low ||
          checkpoint.at < trustedSince)
      ) {
        open.store.clear();
        from = 0;
      }
      if (from === 0 && !checkpoint) open.store.clear();
      counts.set(ref.partition, 0);
      // Records not read yet may be tombstones of any age: until the end, a checkpoint of the
      // tail keeps the time it had and one of a full restore has none.
      readingSince.set(ref.partition, from === 0 ? 0 : (checkpoint?.at ?? 0));
      if (from < end.high)
        ranges.push({ partition: ref.partition, from: Math.max(from, end.low), to: end.high });
      else open.store.apply([], { changelog: changelog.name, offset: end.high, at: started });
    }
    const byPartition = new Map(opened.map((o) => [o.ref.partition, o]));
    const pending = new Map<number, { changes: StateChange[]; next: number }>();
    const flush = (partition: number) => {
      const { ref, open } = byPartition.get(partition) as (typeof opened)[number];
      const batch = pending.get(partition);
      pending.delete(partition);
      // Released meanwhile, perhaps opened again by a restore of its own: not this one's to write.
      if (!batch || this.#open.get(keyOf(ref)) !== open) return;
      const reachedEnd = batch.next >= (ends.get(partition)?.high ?? 0);
      open.store.apply(batch.changes, {
        changelog: changelog.name,
        offset: batch.next,
        at: reachedEnd ? started : (readingSince.get(partition) ?? 0),
      });
      counts.set(partition, (counts.get(partition) ?? 0) + batch.changes.length);
      pipelineEvents.state.publish({
        type: 'progress',
        topic: ref.topic,
        partition,
        records: batch.changes.length,
        seconds: (Date.now() - started) / 1000,
      });
    };
    await changelog.read(ranges, (partition, changes, next) => {
      const batch = pending.get(partition) ?? { changes: [], next };
      batch.changes.push(...changes);
      batch.next = next;
      pending.set(partition, batch);
      if (batch.changes.length >= RESTORE_TRANSACTION_RECORDS) flush(partition);
    });
    for (const partition of [...pending.keys()]) flush(partition);
    done();
    const ms = Date.now() - started;
    for (const ref of fresh) {
      const records = counts.get(ref.partition) ?? 0;
      this.#restored.push({ partition: ref, records, ms });
      pipelineEvents.state.publish({
        type: 'restored',
        topic: ref.topic,
        partition: ref.partition,
        records: 0,
        seconds: ms / 1000,
      });
    }
    // Only the most recent restores matter to anyone reading them.
    if (this.#restored.length > 1_000) this.#restored = this.#restored.slice(-500);
  }

  #close(ref: PartitionRef): void {
    const open = this.#open.get(keyOf(ref));
    if (!open) return;
    this.#open.delete(keyOf(ref));
    open.store.close();
  }
}
