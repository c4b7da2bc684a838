// One input partition's partner state in its own SQLite file: the latest stored state per
// partner, and the checkpoint (how far the storage topic, its changelog, is reflected in
// it), written in the same transactions as the data so that the two never disagree.
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { StoredPartner } from '../pipeline/outputs.ts';

/** One storage topic record: a partner's new state, or null when it was deleted. */
export interface StateChange {
  partnerId: string;
  stored: StoredPartner | null;
}

export interface Checkpoint {
  /** The changelog the state was restored from; another one makes the file useless. */
  changelog: string;
  /** Every changelog record below this offset is reflected in the state. */
  offset: number;
}

export class PartitionStore {
  readonly #db: DatabaseSync;
  readonly #get: StatementSync;
  readonly #put: StatementSync;
  readonly #delete: StatementSync;
  readonly #count: StatementSync;
  readonly #readCheckpoint: StatementSync;
  readonly #writeCheckpoint: StatementSync;

  constructor(path: string) {
    this.#db = new DatabaseSync(path);
    // WAL with synchronous=NORMAL: a crash loses at most the last transactions, data and
    // checkpoint together, and the changelog brings them back.
    this.#db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = NORMAL;
      CREATE TABLE IF NOT EXISTS partners (id TEXT PRIMARY KEY, state TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS checkpoint (
        one INTEGER PRIMARY KEY CHECK (one = 1), changelog TEXT NOT NULL, offset INTEGER NOT NULL
      );
    `);
    this.#get = this.#db.prepare('SELECT state FROM partners WHERE id = ?');
    this.#put = this.#db.prepare(
      'INSERT INTO partners (id, state) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET state = excluded.state',
    );
    this.#delete = this.#db.prepare('DELETE FROM partners WHERE id = ?');
    this.#count = this.#db.prepare('SELECT count(*) AS n FROM partners');
    this.#readCheckpoint = this.#db.prepare('SELECT changelog, offset FROM checkpoint WHERE one = 1');
    this.#writeCheckpoint = this.#db.prepare(
      'INSERT INTO checkpoint (one, changelog, offset) VALUES (1, ?, ?) ON CONFLICT (one) DO UPDATE SET changelog = excluded.changelog, offset = excluded.offset',
    );
  }

  get(partnerId: string): StoredPartner | undefined {
    const row = this.#get.get(partnerId) as { state: string } | undefined;
    return row ? (JSON.parse(row.state) as StoredPartner) : undefined;
  }

  set(partnerId: string, stored: StoredPartner): void {
    this.#put.run(partnerId, JSON.stringify(stored));
  }

  delete(partnerId: string): void {
    this.#delete.run(partnerId);
  }

  get size(): number {
    return (this.#count.get() as { n: number }).n;
  }

  get checkpoint(): Checkpoint | undefined {
    const row = this.#readCheckpoint.get() as { changelog: string; offset: number } | undefined;
    return row ? { changelog: row.changelog, offset: row.offset } : undefined;
  }

  /** Applies changelog records in order and moves the checkpoint past them, atomically. */
  apply(changes: StateChange[], checkpoint: Checkpoint): void {
    this.#transaction(() => {
      for (const { partnerId, stored } of changes) {
        if (stored) this.set(partnerId, stored);
        else this.delete(partnerId);
      }
      this.#writeCheckpoint.run(checkpoint.changelog, checkpoint.offset);
    });
  }

  /** Forgets everything: the file belonged to another changelog, or is ahead of it. */
  clear(): void {
    this.#transaction(() => this.#db.exec('DELETE FROM partners; DELETE FROM checkpoint;'));
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }

  #transaction(work: () => void): void {
    this.#db.exec('BEGIN');
    try {
      work();
      this.#db.exec('COMMIT');
    } catch (error) {
      this.#db.exec('ROLLBACK');
      throw error;
    }
  }
}
