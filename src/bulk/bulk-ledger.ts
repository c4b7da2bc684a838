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
      this.#entries.delete(entry.bulkId);
      for (const task of entry.tasks) for (const p of task.positions) this.#byRecord.delete(recordKey(p));
      released.push(entry.bulkId);
    }
    return released;
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
