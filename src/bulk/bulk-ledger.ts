// Submitted bulks, remembered until every record in them is committed at the source:
// a record re-read after a crash, restart or rebalance finds the bulk it was already
// submitted in, and the pipeline polls that bulk instead of paying for it again.
// A bulk is kept as one entry per input partition it holds records of, so that whoever
// owns a partition when its records are committed releases that partition's entry: after
// a rebalance no single member commits every partition of a bulk.
import { positionKey, type SourcePosition, type SubmittedTask } from '../pipeline/records.ts';

export interface LedgerEntry {
  /** The store's key: bulk id and input partition (a bare bulk id in entries of earlier versions). */
  key?: string;
  bulkId: string;
  createdAt: number;
  tasks: { taskId: string; hash: string; positions: SourcePosition[] }[];
}

const entryKey = (entry: LedgerEntry): string => entry.key ?? entry.bulkId;

/** Where ledger entries are kept durably (the internal state topic, or memory for files). */
export interface LedgerStore {
  load(): Promise<LedgerEntry[]>;
  /**
   * Keeps delivering what other replicas record and remove, until the returned function is
   * called; without it, only this process's own bulks are known after load().
   */
  follow?(changes: {
    recorded(entry: LedgerEntry): void;
    removed(bulkId: string): void;
  }): Promise<() => Promise<void>>;
  /** Resolves once what other replicas recorded up to now is delivered to follow()'s listener. */
  caughtUp?(): Promise<void>;
  save(entries: LedgerEntry[]): Promise<void>;
  remove(keys: string[]): Promise<void>;
}

const recordKey = (position: SourcePosition): string => `${positionKey(position)}:${position.offset}`;

export class BulkLedger {
  readonly #store: LedgerStore;
  readonly #entries = new Map<string, LedgerEntry>();
  readonly #byRecord = new Map<string, SubmittedTask>();

  constructor(store: LedgerStore) {
    this.#store = store;
  }

  async load(): Promise<void> {
    for (const entry of await this.#store.load()) this.#index(entry);
  }

  /**
   * Follows the bulks other replicas submit, so that a record moved here by a rebalance
   * finds the bulk its former owner paid for. Returns the function that stops following.
   */
  async follow(): Promise<() => Promise<void>> {
    if (!this.#store.follow) return async () => {};
    return this.#store.follow({
      recorded: (entry) => this.#index(entry),
      removed: (key) => this.#forget(key),
    });
  }

  /** Resolves once every bulk recorded anywhere up to now is known here. */
  async caughtUp(): Promise<void> {
    await this.#store.caughtUp?.();
  }

  get size(): number {
    return this.#entries.size;
  }

  find(position: SourcePosition): SubmittedTask | undefined {
    return this.#byRecord.get(recordKey(position));
  }

  /** Persists the bulk, one entry per input partition, before it is polled; resolves once the store has it durably. */
  async record(bulk: Omit<LedgerEntry, 'key'>): Promise<void> {
    const byPartition = new Map<string, LedgerEntry>();
    for (const task of bulk.tasks) {
      const partition = positionKey(task.positions[0] as SourcePosition);
      let entry = byPartition.get(partition);
      if (!entry) {
        entry = {
          key: `${bulk.bulkId}/${partition}`,
          bulkId: bulk.bulkId,
          createdAt: bulk.createdAt,
          tasks: [],
        };
        byPartition.set(partition, entry);
      }
      entry.tasks.push(task);
    }
    const entries = [...byPartition.values()];
    await this.#store.save(entries);
    for (const entry of entries) this.#index(entry);
  }

  /**
   * Drops entries whose every record lies below the committed positions; returns the ids of
   * bulks of which no entry is left.
   */
  async release(committed: { topic: string; partition: number; offset: number }[]): Promise<string[]> {
    const commits = new Map(committed.map((c) => [positionKey(c), c.offset]));
    const isCommitted = (p: SourcePosition) => p.offset < (commits.get(positionKey(p)) ?? -1);
    const done = [...this.#entries.values()].filter((entry) =>
      entry.tasks.every((task) => task.positions.every(isCommitted)),
    );
    if (done.length === 0) return [];
    await this.#store.remove(done.map(entryKey));
    for (const entry of done) this.#forget(entryKey(entry));
    const left = new Set([...this.#entries.values()].map((entry) => entry.bulkId));
    return [...new Set(done.map((entry) => entry.bulkId))].filter((bulkId) => !left.has(bulkId));
  }

  #forget(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    for (const task of entry.tasks) for (const p of task.positions) this.#byRecord.delete(recordKey(p));
  }

  #index(entry: LedgerEntry): void {
    this.#entries.set(entryKey(entry), entry);
    for (const task of entry.tasks) {
      for (const position of task.positions) {
        this.#byRecord.set(recordKey(position), {
          bulkId: entry.bulkId,
          taskId: task.taskId,
          hash: task.hash,
        });
      }
    }
  }
}

export const memoryLedgerStore = (): LedgerStore => {
  const entries = new Map<string, LedgerEntry>();
  return {
    load: async () => [...entries.values()],
    save: async (saved) => {
      for (const entry of saved) entries.set(entryKey(entry), entry);
    },
    remove: async (keys) => {
      for (const key of keys) entries.delete(key);
    },
  };
};
