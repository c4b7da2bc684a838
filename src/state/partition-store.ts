// One input partition's partner state in its own SQLite file: the latest stored state per
// partner, the input record behind each delete or failed lookup not yet committed past, and the checkpoint
// (how far the storage topic, its changelog, is reflected in it), written in the same
// transactions as the data so that the two never disagree.
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { InputIdentity, StoredPartner } from '../pipeline/outputs.ts';
import { StateError } from './errors.ts';

/** One storage topic record: a partner's new state, or null when it was deleted. */
export interface StateChange {
  partnerId: string;
  stored: StoredPartner | null;
  /**
   * The input record the change finished without a state of its own: a delete's tombstone, or
   * the record whose lookup failed for good (its partner's state written again as it was, or
   * deleted when none was stored). Storage records written before such names say none.
   */
  finishedBy?: InputIdentity;
}

export interface Checkpoint {
  /** The changelog the state was restored from; another one makes the file useless. */
  changelog: string;
  /** Every changelog record below this offset is reflected in the state. */
  offset: number;
  /**
   * Wall-clock time (ms) before which no changelog record at or above `offset` was written,
   * 0 when not known: how long a restore from `offset` can count on seeing every tombstone
   * that came after it.
   */
  at: number;
}

/**
 * What a file holds per partner and how: 2 added the partner record and the match time; 3
 * keeps partners in a rowid table with an index on the id. Before, the rows (about 650 bytes)
 * sat in the id's own B-tree (WITHOUT ROWID), where every new partner, its id in no
 * particular order, was inserted between large rows: 32 against 8 µs per record restored,
 * 55 against 23 µs per new partner processed (get and upsert, 300,000 partners in the file).
 * 4 adds the checkpoint's time: a checkpoint without one cannot tell whether compaction has
 * removed tombstones it did not see. The table of finished input records came without a new
 * format: a file without it lacks nothing the changelog has for it (the storage records
 * written before name no input record), so it is added in place and the file is not restored
 * in full; the rows of a table from when it held deletes alone (`deleted`) are moved into it.
 */
const FORMAT = 4;

interface FinishedRow {
  offset: number;
  timestamp: number;
  from_offset: number | null;
  from_timestamp: number | null;
}

/** The finished table's values of an input record: offset, timestamp, and the oldest coalesced with it. */
const finishedRow = (by: InputIdentity): [number, number, number | null, number | null] => [
  by.offset,
  by.timestamp,
  by.coalescedFrom?.offset ?? null,
  by.coalescedFrom?.timestamp ?? null,
];

/** The most finished input records whose partner ids are held in memory (PartitionStore.#finishedIds). */
const FINISHED_IDS_HELD = 10_000;

export class PartitionStore {
  readonly #db: DatabaseSync;
  readonly #get: StatementSync;
  readonly #put: StatementSync;
  readonly #delete: StatementSync;
  readonly #markFinished: StatementSync;
  readonly #finishedBy: StatementSync;
  readonly #forgetFinished: StatementSync;
  readonly #finishedIdsRead: StatementSync;
  /**
   * The ids of the table of finished input records: every record processed asks whether it
   * was finished already, and few partners are in the table (those of about one commit
   * interval), so most are answered without a query. Undefined while the table holds more
   * than FINISHED_IDS_HELD (a restore that read many, an idle partition): asked each time.
   */
  #finishedIds: Set<string> | undefined = new Set();
  readonly #count: StatementSync;
  readonly #scan: StatementSync;
  readonly #scanUntil: StatementSync;
  readonly #readCheckpoint: StatementSync;
  readonly #writeCheckpoint: StatementSync;
  /**
   * The open transaction of the writes made since the last turn of the event loop. A commit
   * per partner written cost more CPU than anything else the pipeline does per record (a WAL
   * append of every touched page per record); one commit per turn takes the outputs of a
   * whole sink acknowledgement together.
   */
  #batch: NodeJS.Immediate | undefined;
  /** A batch that could not be written: the state is unusable, said by every later call. */
  #failure: StateError | undefined;
  readonly #path: string;
  readonly #failed: ((error: StateError) => void) | undefined;

  /**
   * `failed` hears of a write of the pipeline's that did not reach the file (the disk full,
   * the file unwritable) once, when it happens: the batch is committed after the call that
   * made it returned, so only the next call would say so, and only if one came.
   */
  constructor(path: string, failed?: (error: StateError) => void) {
    this.#path = path;
    this.#failed = failed;
    this.#db = new DatabaseSync(path);
    // WAL with synchronous=NORMAL: a crash loses at most the last transactions, data and
    // checkpoint together, and the changelog brings them back. A page cache of 512 KiB per
    // partition (SQLite's default is 2 MiB): a lookup by key reads a few pages and the
    // kernel's page cache keeps the file. Part of the measured memory setting
    // (docs/BENCHMARKS.md, Memory); alone it did not lower the peak measurably.
    this.#db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = NORMAL;
      PRAGMA cache_size = -512;
    `);
    // A file of another format is restored in full: one that kept less per partner has a
    // checkpoint that would skip the changelog records carrying what it lacks, and a table of
    // another layout is not converted in place.
    if ((this.#db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version !== FORMAT) {
      this.#db.exec(
        `DROP TABLE IF EXISTS partners; DROP TABLE IF EXISTS checkpoint; DROP TABLE IF EXISTS deleted; DROP TABLE IF EXISTS finished; PRAGMA user_version = ${FORMAT};`,
      );
    }
    this.#db.exec(`
      CREATE TABLE IF NOT EXISTS partners (id TEXT PRIMARY KEY, state TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS checkpoint (
        one INTEGER PRIMARY KEY CHECK (one = 1), changelog TEXT NOT NULL, offset INTEGER NOT NULL,
        at INTEGER NOT NULL
      );
      CREATE TABLE IF NOT EXISTS finished (
        id TEXT PRIMARY KEY, offset INTEGER NOT NULL, timestamp INTEGER NOT NULL,
        from_offset INTEGER, from_timestamp INTEGER
      );
    `);
    // The oldest record of a coalesced lookup that failed (InputIdentity.coalescedFrom), in a
    // file from before it was kept: added in place, its rows named none, as they did. Each
    // column on its own, in one transaction: both in one exec without it committed one at a
    // time, and a kill between them left a file that failed every later open.
    const columns = new Set(
      (this.#db.prepare('PRAGMA table_info(finished)').all() as { name: string }[]).map((c) => c.name),
    );
    const missing = ['from_offset', 'from_timestamp'].filter((column) => !columns.has(column));
    if (missing.length > 0)
      this.#db.exec(
        `BEGIN; ${missing.map((column) => `ALTER TABLE finished ADD COLUMN ${column} INTEGER;`).join(' ')} COMMIT;`,
      );
    // The table's name from when deletes alone had one; also what a version from before
    // starts anew on a file given back to it by a rollback.
    if (this.#db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'deleted'`).get())
      this.#db.exec(`
        BEGIN;
        INSERT OR REPLACE INTO finished (id, offset, timestamp) SELECT id, offset, timestamp FROM deleted;
        DROP TABLE deleted;
        COMMIT;
      `);
    this.#get = this.#db.prepare('SELECT state FROM partners WHERE id = ?');
    this.#put = this.#db.prepare(
      'INSERT INTO partners (id, state) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET state = excluded.state',
    );
    this.#delete = this.#db.prepare('DELETE FROM partners WHERE id = ?');
    this.#markFinished = this.#db.prepare(
      'INSERT INTO finished (id, offset, timestamp, from_offset, from_timestamp) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET offset = excluded.offset, timestamp = excluded.timestamp, from_offset = excluded.from_offset, from_timestamp = excluded.from_timestamp',
    );
    this.#finishedBy = this.#db.prepare(
      'SELECT offset, timestamp, from_offset, from_timestamp FROM finished WHERE id = ?',
    );
    this.#forgetFinished = this.#db.prepare('DELETE FROM finished WHERE offset < ?');
    this.#finishedIdsRead = this.#db.prepare(`SELECT id FROM finished LIMIT ${FINISHED_IDS_HELD + 1}`);
    this.#loadFinishedIds();
    this.#count = this.#db.prepare('SELECT count(*) AS n FROM partners');
    this.#scan = this.#db.prepare('SELECT id, state FROM partners WHERE id > ? ORDER BY id LIMIT ?');
    this.#scanUntil = this.#db.prepare(
      'SELECT id, state FROM partners WHERE id > ? AND id <= ? ORDER BY id LIMIT ?',
    );
    this.#readCheckpoint = this.#db.prepare('SELECT changelog, offset, at FROM checkpoint WHERE one = 1');
    this.#writeCheckpoint = this.#db.prepare(
      'INSERT INTO checkpoint (one, changelog, offset, at) VALUES (1, ?, ?, ?) ON CONFLICT (one) DO UPDATE SET changelog = excluded.changelog, offset = excluded.offset, at = excluded.at',
    );
  }

  get(partnerId: string): StoredPartner | undefined {
    this.#checkUsable();
    const row = this.#get.get(partnerId) as { state: string } | undefined;
    return row ? (JSON.parse(row.state) as StoredPartner) : undefined;
  }

  /** Stored with the other writes of this turn of the event loop; get() sees it at once. */
  set(partnerId: string, stored: StoredPartner): void {
    this.#joinBatch();
    this.#write(this.#put, partnerId, JSON.stringify(stored));
  }

  /** The partner leaves the state, with the other writes of this turn of the event loop. */
  delete(partnerId: string): void {
    this.#joinBatch();
    this.#write(this.#delete, partnerId);
  }

  /**
   * `by` finished the partner without a state of its own (StateChange.finishedBy), kept with
   * the other writes of this turn: that input record read again before its position was
   * committed is told apart from any other (finishedBy).
   */
  markFinished(partnerId: string, by: InputIdentity): void {
    this.#joinBatch();
    this.#write(this.#markFinished, partnerId, ...finishedRow(by));
    this.#holdFinishedId(partnerId);
  }

  /** The input record that last finished the partner without a state of its own, kept until its position is committed (forgetFinishedBefore). */
  finishedBy(partnerId: string): InputIdentity | undefined {
    this.#checkUsable();
    if (this.#finishedIds?.has(partnerId) === false) return undefined;
    const row = this.#finishedBy.get(partnerId) as FinishedRow | undefined;
    if (!row) return undefined;
    const by: InputIdentity = { offset: row.offset, timestamp: row.timestamp };
    if (row.from_offset !== null && row.from_timestamp !== null)
      by.coalescedFrom = { offset: row.from_offset, timestamp: row.from_timestamp };
    return by;
  }

  /**
   * The input partition's position is committed at `offset`: its records below it are not
   * read again (unless an operator resets the group's offsets), so the ones finished without
   * a state are forgotten, and the table holds only those of about one commit interval.
   */
  forgetFinishedBefore(offset: number): void {
    if (this.#finishedIds?.size === 0) return;
    this.#joinBatch();
    this.#write(this.#forgetFinished, offset);
    this.#loadFinishedIds();
  }

  /**
   * Up to `limit` partners in id order, after `after` ('' for the first) and, given `until`,
   * not after it (ids compared as the store orders them).
   */
  scan(after: string, limit: number, until?: string): { partnerId: string; stored: StoredPartner }[] {
    const rows =
      until === undefined ? this.#scan.all(after, limit) : this.#scanUntil.all(after, until, limit);
    return (rows as { id: string; state: string }[]).map((row) => ({
      partnerId: row.id,
      stored: JSON.parse(row.state) as StoredPartner,
    }));
  }

  get size(): number {
    return (this.#count.get() as { n: number }).n;
  }

  get checkpoint(): Checkpoint | undefined {
    const row = this.#readCheckpoint.get() as Checkpoint | undefined;
    return row ? { changelog: row.changelog, offset: row.offset, at: row.at } : undefined;
  }

  /** Applies changelog records in order and moves the checkpoint past them, atomically. */
  apply(changes: StateChange[], checkpoint: Checkpoint): void {
    this.#transaction(() => {
      for (const { partnerId, stored, finishedBy } of changes) {
        if (stored) this.#put.run(partnerId, JSON.stringify(stored));
        else this.#delete.run(partnerId);
        if (finishedBy) {
          this.#markFinished.run(partnerId, ...finishedRow(finishedBy));
          this.#holdFinishedId(partnerId);
        }
      }
      this.#writeCheckpoint.run(checkpoint.changelog, checkpoint.offset, checkpoint.at);
    });
  }

  /**
   * The pipeline's checkpoint: moves it alone, and a write that fails fails the store as the
   * pipeline's other writes do. Left behind, the checkpoint itself would do no harm (it stays
   * a lower bound), but a disk that takes no checkpoint takes no state either, and while no
   * record comes nothing else would say so: the replica would look healthy on a broken disk.
   */
  moveCheckpoint(checkpoint: Checkpoint): void {
    try {
      this.apply([], checkpoint);
    } catch (error) {
      throw error instanceof StateError ? error : this.#fail(error as Error);
    }
  }

  /** Forgets everything: the file belonged to another changelog, or is ahead of it. */
  clear(): void {
    this.#transaction(() =>
      this.#db.exec('DELETE FROM partners; DELETE FROM checkpoint; DELETE FROM finished;'),
    );
    this.#finishedIds = new Set();
  }

  close(): void {
    if (!this.#db.isOpen) return;
    this.#commitBatch();
    this.#db.close();
  }

  #joinBatch(): void {
    this.#checkUsable();
    if (this.#batch) return;
    try {
      this.#db.exec('BEGIN');
    } catch (error) {
      throw this.#fail(error as Error);
    }
    this.#batch = setImmediate(() => this.#commitBatch());
  }

  /**
   * A write of the batch; one that fails (a page spilled to a full disk) fails the store as
   * its commit does. Arguments, not a closure: it runs for every partner stored.
   */
  #write(statement: StatementSync, ...values: (string | number | null)[]): void {
    try {
      statement.run(...values);
    } catch (error) {
      throw this.#fail(error as Error);
    }
  }

  #commitBatch(): void {
    if (!this.#batch) return;
    clearImmediate(this.#batch);
    this.#batch = undefined;
    try {
      this.#db.exec('COMMIT');
    } catch (error) {
      this.#fail(error as Error);
    }
  }

  /**
   * The batch's writes are lost: the state no longer reflects what the storage topic
   * acknowledged, and nothing more may be answered from it or written to it.
   */
  #fail(error: Error): StateError {
    if (this.#db.isTransaction) {
      try {
        this.#db.exec('ROLLBACK');
      } catch {
        // The connection's own state is beyond use too; the failure below says why.
      }
    }
    if (this.#batch) {
      clearImmediate(this.#batch);
      this.#batch = undefined;
    }
    if (this.#failure) return this.#failure;
    this.#failure = new StateError(
      'STATE_FILE_WRITE_FAILED',
      `partner state not written to ${this.#path}: ${error.message}`,
      { cause: error, details: { path: this.#path } },
    );
    this.#failed?.(this.#failure);
    return this.#failure;
  }

  #loadFinishedIds(): void {
    const rows = this.#finishedIdsRead.all() as { id: string }[];
    this.#finishedIds = rows.length > FINISHED_IDS_HELD ? undefined : new Set(rows.map((row) => row.id));
  }

  #holdFinishedId(partnerId: string): void {
    this.#finishedIds?.add(partnerId);
    if (this.#finishedIds && this.#finishedIds.size > FINISHED_IDS_HELD) this.#finishedIds = undefined;
  }

  #checkUsable(): void {
    if (this.#failure) throw this.#failure;
  }

  #transaction(work: () => void): void {
    // The checkpoint written here must not reach the disk before the writes it covers.
    this.#commitBatch();
    this.#checkUsable();
    this.#db.exec('BEGIN');
    try {
      work();
      this.#db.exec('COMMIT');
    } catch (error) {
      // SQLite ends the transaction itself on some failures (a full disk): a ROLLBACK then
      // fails with "no transaction is active", which would hide why.
      if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
      throw error;
    }
  }
}
