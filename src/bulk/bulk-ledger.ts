// Submitted bulks, remembered until every record in them is committed at the source:
// a record re-read after a crash, restart or rebalance finds the bulk it was already
// submitted in, and the pipeline polls that bulk instead of paying for it again.
import { positionKey, type SourcePosition, type SubmittedTask } from '../pipeline/records.ts';

export interface LedgerEntry {
  bulkId: string;
  createdAt: number;
  tasks: { taskId: string; hash: string; positions: SourcePosition[] }[];
}

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
  save(entry: LedgerEntry): Promise<void>;
  remove(bulkId: string): Promise<void>;
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
      removed: (bulkId) => this.#forget(bulkId),
    });
  }

  get size(): number {
    return this.#entries.size;
  }

  find(position: SourcePosition): SubmittedTask | undefined {
    return this.#byRecord.get(recordKey(position));
  }

  /** Persists the bulk before it is polled; resolves once the store has it durably. */
  async record(entry: LedgerEntry): Promise<void> {
    await this.#store.save(entry);
    this.#index(entry);
  }

  /** Drops bulks whose every record lies below the committed positions; returns their ids. */
  async release(committed: { topic: string; partition: number; offset: number }[]): Promise<string[]> {
    const released: string[] = [];
    const commits = new Map(committed.map((c) => [positionKey(c), c.offset]));
    const isCommitted = (p: SourcePosition) => p.offset < (commits.get(positionKey(p)) ?? -1);
    for (const entry of [...this.#entries.values()]) {
      if (!entry.tasks.every((task) => task.positions.every(isCommitted))) continue;
      await this.#store.remove(entry.bulkId);
      this.#forget(entry.bulkId);
      released.push(entry.bulkId);
    }
    return released;
  }

  #forget(bulkId: string): void {
    const entry = this.#entries.get(bulkId);
    if (!entry) return;
    this.#entries.delete(bulkId);
    for (const task of entry.tasks) for (const p of task.positions) this.#byRecord.delete(recordKey(p));
  }

  #index(entry: LedgerEntry): void {
    this.#entries.set(entry.bulkId, entry);
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
    save: async (entry) => void entries.set(entry.bulkId, entry),
    remove: async (bulkId) => void entries.delete(bulkId),
  };
};
