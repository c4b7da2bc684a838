// Bulk submissions, remembered until every record in them is committed at the source: a
// record re-read after a crash, restart or rebalance finds the submission it was already
// part of, and the pipeline polls that bulk instead of paying for it again.
//
// A submission is recorded twice: as an intent before its quota is consumed (tasks and
// positions, no bulk id, a lease its submitter renews while it works), then with the bulk
// id once the bulk exists. A member that reads a record under a live intent of someone
// else waits for it; an intent whose lease ran out (its submitter died) is adopted: looked
// up under the quota already spent for it, not paid again.
//
// Each submission is kept as one entry per input partition it holds records of, so that
// whoever owns a partition when its records are committed releases that partition's entry:
// after a rebalance no single member commits every partition of a bulk.
import { positionKey, type SourcePosition, type SubmittedTask } from '../pipeline/records.ts';

export interface LedgerTask {
  taskId: string;
  hash: string;
  positions: SourcePosition[];
  /**
   * The task's unit was consumed before this submission (a dead member's paid intent adopted,
   * a create that failed): whoever adopts the intent does not consume for it, paid intent or
   * not. The submission's own intent names its records before its consume; without the mark,
   * a submitter killed before its paid intent landed left the records under an unpaid intent,
   * and the unit paid for them before was consumed again.
   */
  paid?: boolean;
}

export interface LedgerEntry {
  /** The store's key: submission and input partition (a bare bulk id in entries of earlier versions). */
  key?: string;
  /** The submission the entry belongs to; the bulk id in entries of earlier versions. */
  submissionId?: string;
  /** Absent while the submission is an intent: its quota may be spent, its bulk not yet created. */
  bulkId?: string;
  /** Until when (epoch ms) the submitter of an intent vouches for it. */
  leaseUntil?: number;
  /** The intent's quota is consumed: whoever adopts it does not consume again. */
  paid?: boolean;
  /** The consumer group member that wrote the intent: once it left the group, the intent is abandoned. */
  owner?: string;
  createdAt: number;
  tasks: LedgerTask[];
}

/** Where ledger entries are kept durably (the internal state topic, or memory for files). */
export interface LedgerStore {
  load(): Promise<LedgerEntry[]>;
  /**
   * Keeps delivering what other replicas record and remove, until the returned function is
   * called, or `failed` says it stopped for good; without it, only this process's own
   * submissions are known after load().
   */
  follow?(changes: {
    recorded(entry: LedgerEntry): void;
    removed(key: string): void;
    failed(error: Error): void;
  }): Promise<() => Promise<void>>;
  /** Resolves once what other replicas recorded up to now is delivered to follow()'s listener. */
  caughtUp?(): Promise<void>;
  save(entries: LedgerEntry[]): Promise<void>;
  remove(keys: string[]): Promise<void>;
}

const OWNER_CHECK_MS = 2_000;

/** The submission an entry belongs to (the bulk id in entries of earlier versions). */
export const submissionOf = (entry: LedgerEntry): string => entry.submissionId ?? (entry.bulkId as string);
/** The entry's key in the store. */
export const entryKey = (entry: LedgerEntry): string => entry.key ?? submissionOf(entry);

/** How far a submission has come: intent (0), paid intent (1), recorded bulk (2). It never goes back. */
export const ledgerStage = (entry: LedgerEntry): number =>
  entry.bulkId !== undefined ? 2 : entry.paid ? 1 : 0;

/** The submission that holds a record: the entry (indexed entries are never changed) and the record's task in it. */
interface Claim {
  entry: LedgerEntry;
  task: LedgerTask;
}

/**
 * A value per record, by topic, partition and offset: no key string built per record on each
 * of a submission's three saves and each find (2.5 against 3.3 µs per record indexed, found
 * and released, measured alone).
 */
class ByRecord<T> {
  readonly #topics = new Map<string, Map<number, Map<number, T>>>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  get(position: SourcePosition): T | undefined {
    return this.#topics.get(position.topic)?.get(position.partition)?.get(position.offset);
  }

  set(position: SourcePosition, value: T): void {
    let partitions = this.#topics.get(position.topic);
    if (!partitions) this.#topics.set(position.topic, (partitions = new Map()));
    let offsets = partitions.get(position.partition);
    if (!offsets) partitions.set(position.partition, (offsets = new Map()));
    if (!offsets.has(position.offset)) this.#size += 1;
    offsets.set(position.offset, value);
  }

  delete(position: SourcePosition): void {
    const partitions = this.#topics.get(position.topic);
    const offsets = partitions?.get(position.partition);
    if (!partitions || !offsets?.delete(position.offset)) return;
    this.#size -= 1;
    if (offsets.size > 0) return;
    partitions.delete(position.partition);
    if (partitions.size === 0) this.#topics.delete(position.topic);
  }
}

const submittedTask = ({ entry, task }: Claim): SubmittedTask => ({
  submissionId: submissionOf(entry),
  ...(entry.bulkId !== undefined ? { bulkId: entry.bulkId } : {}),
  ...(entry.paid || task.paid ? { paid: true } : {}),
  taskId: task.taskId,
  hash: task.hash,
});

export class BulkLedger {
  readonly #store: LedgerStore;
  readonly #now: () => number;
  readonly #entries = new Map<string, LedgerEntry>();
  readonly #bySubmission = new Map<string, Set<string>>();
  /**
   * Each record's submission. A claim points into the entry rather than copying it: a
   * submission is indexed three times (intent, paid intent, bulk) for every record in it.
   */
  readonly #byRecord = new ByRecord<Claim>();
  /**
   * Records more than one submission has held (a dead member's intent adopted): when the claim
   * of one of them is dropped, it goes back to the newest submission still holding the record,
   * as load() would index it. Empty unless an intent was adopted.
   */
  readonly #contested = new ByRecord<true>();
  readonly #waiters = new Map<string, (() => void)[]>();
  /** Submissions whose bulk is being (or was) recorded, or that are being withdrawn: an intent never overwrites that. */
  readonly #ended = new Set<string>();

  constructor(store: LedgerStore, now: () => number = Date.now) {
    this.#store = store;
    this.#now = now;
  }

  async load(): Promise<void> {
    for (const entry of await this.#store.load()) this.#index(entry);
  }

  /**
   * Follows the submissions other replicas make, so that a record moved here by a rebalance
   * finds what its former owner paid for. Returns the function that stops following; `failed`
   * is called when following stopped for good: what others pay for is no longer known here.
   */
  async follow(failed: (error: Error) => void): Promise<() => Promise<void>> {
    if (!this.#store.follow) return async () => {};
    return this.#store.follow({
      recorded: (entry) => this.#index(entry),
      removed: (key) => this.#forget(key),
      failed,
    });
  }

  /** Resolves once every submission recorded anywhere up to now is known here. */
  async caughtUp(): Promise<void> {
    await this.#store.caughtUp?.();
  }

  get size(): number {
    return this.#entries.size;
  }

  find(position: SourcePosition): SubmittedTask | undefined {
    const claim = this.#byRecord.get(position);
    return claim && submittedTask(claim);
  }

  /**
   * Records the intent to submit these tasks, before their quota is consumed; again once it
   * is (`paid`), and again to renew its lease.
   */
  async intend(
    submissionId: string,
    tasks: LedgerTask[],
    intent: { leaseMs: number; paid: boolean; owner?: string | undefined },
  ): Promise<void> {
    // A renewal that fires while the bulk's record or the withdrawal is still being written
    // (slow in a broker outage) would land after it and reopen the intent for good.
    if (this.#ended.has(submissionId)) return;
    const { leaseMs, paid, owner } = intent;
    const state = {
      leaseUntil: this.#now() + leaseMs,
      ...(paid ? { paid } : {}),
      ...(owner ? { owner } : {}),
    };
    await this.#save(submissionId, state, tasks);
  }

  /**
   * Records the created bulk, before it is polled; resolves once the store has it durably.
   * Partitions of the intent whose tasks were left out (revoked while quota was awaited) are
   * removed, so that their new owner stops waiting for them.
   */
  async record(submissionId: string, bulkId: string, tasks: LedgerTask[]): Promise<void> {
    this.#ended.add(submissionId);
    await this.#save(submissionId, { bulkId }, tasks);
  }

  /** Withdraws an intent whose quota was not consumed (stopping, the quota check failed). */
  async abandon(submissionId: string): Promise<void> {
    const keys = [...(this.#bySubmission.get(submissionId) ?? [])];
    if (keys.length === 0) return;
    this.#ended.add(submissionId);
    await this.#store.remove(keys);
    for (const key of keys) this.#forget(key);
  }

  /**
   * Resolves when the intent a record was found under is settled for that record: its bulk
   * recorded, the record left out or the intent withdrawn, or its submitter gone. `alive`
   * says whether the intent's writer is still a member of the consumer group (undefined
   * where that cannot be known): a member that left is gone at once (a member killed with
   * SIGKILL leaves before anyone else is given its partitions), a member still there is
   * waited for however long its writes take (a broker outage stops its renewals, not its
   * submission); only where membership is unknown does the lease decide.
   */
  async settled(
    position: SourcePosition,
    submissionId: string,
    alive: (owner: string) => Promise<boolean | undefined> = async () => undefined,
  ): Promise<void> {
    const open = () => {
      const found = this.find(position);
      return found?.submissionId === submissionId && found.bulkId === undefined;
    };
    for (;;) {
      if (!open()) return;
      const entries = [...(this.#bySubmission.get(submissionId) ?? [])].map((key) => this.#entries.get(key));
      const owner = entries.find((entry) => entry?.owner)?.owner;
      const living = owner ? await alive(owner).catch(() => undefined) : undefined;
      if (living === false || !open()) return;
      const leaseUntil = Math.max(...entries.map((entry) => entry?.leaseUntil ?? 0));
      if (living === undefined && leaseUntil <= this.#now()) return;
      // The writer's membership is looked at again now and then while it works.
      const wait = living ? OWNER_CHECK_MS : Math.min(leaseUntil - this.#now(), OWNER_CHECK_MS);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(wake, wait);
        const waiters = this.#waiters.get(submissionId) ?? [];
        this.#waiters.set(submissionId, [...waiters, wake]);
        function wake() {
          clearTimeout(timer);
          resolve();
        }
      });
    }
  }

  /**
   * Drops entries whose every record lies below the committed positions; returns the bulk ids
   * of submissions of which no entry is left.
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
    return [
      ...new Set(
        done
          .filter((entry) => entry.bulkId !== undefined && !this.#bySubmission.has(submissionOf(entry)))
          .map((entry) => entry.bulkId as string),
      ),
    ];
  }

  async #save(
    submissionId: string,
    state: Pick<LedgerEntry, 'bulkId' | 'leaseUntil' | 'paid' | 'owner'>,
    tasks: LedgerTask[],
  ) {
    const byPartition = new Map<string, LedgerEntry>();
    for (const task of tasks) {
      const partition = positionKey(task.positions[0] as SourcePosition);
      const key = `${submissionId}/${partition}`;
      let entry = byPartition.get(key);
      if (!entry) {
        entry = { key, submissionId, ...state, createdAt: this.#now(), tasks: [] };
        byPartition.set(key, entry);
      }
      entry.tasks.push(task);
    }
    const entries = [...byPartition.values()];
    const left = [...(this.#bySubmission.get(submissionId) ?? [])].filter((key) => !byPartition.has(key));
    await this.#store.save(entries);
    if (left.length > 0) await this.#store.remove(left);
    for (const entry of entries) this.#index(entry);
    for (const key of left) this.#forget(key);
  }

  #forget(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    const submissionId = submissionOf(entry);
    const keys = this.#bySubmission.get(submissionId);
    keys?.delete(key);
    if (keys?.size === 0) {
      this.#bySubmission.delete(submissionId);
      this.#ended.delete(submissionId);
    }
    this.#unindexRecords(entry);
    this.#wake(submissionId);
  }

  /** Drops the claims that still point into `entry`. */
  #unindexRecords(entry: LedgerEntry): void {
    let contested: SourcePosition[] | undefined;
    for (const task of entry.tasks)
      for (const p of task.positions) {
        if (this.#byRecord.get(p)?.entry !== entry) continue;
        this.#byRecord.delete(p);
        if (this.#contested.size > 0 && this.#contested.get(p)) (contested ??= []).push(p);
      }
    if (contested) this.#reclaim(contested);
  }

  /**
   * Gives each record back to the newest submission that still holds it. Without it, an
   * adopter's intent withdrawn (stopped during its quota wait, or its partition moved) took
   * the record from the dead member's paid intent it had adopted, and whoever read the record
   * next paid for it again. Rare (an adoption, then a withdrawal), so a scan of the entries.
   */
  #reclaim(positions: SourcePosition[]): void {
    const wanted = new ByRecord<true>();
    for (const p of positions) wanted.set(p, true);
    for (const entry of this.#entries.values())
      for (const task of entry.tasks)
        for (const p of task.positions) {
          if (!wanted.get(p)) continue;
          const claim = this.#byRecord.get(p);
          if (!claim || claim.entry.createdAt < entry.createdAt) this.#byRecord.set(p, { entry, task });
        }
    for (const p of positions) if (!this.#byRecord.get(p)) this.#contested.delete(p);
  }

  #index(entry: LedgerEntry): void {
    const key = entryKey(entry);
    const submissionId = submissionOf(entry);
    // An entry saved again may hold fewer records (a bulk cut to the quota granted): the ones
    // it no longer holds are free to go into another submission.
    const previous = this.#entries.get(key);
    // A submission goes from intent to paid intent to recorded bulk, never back: an entry
    // arriving after a later one (the follower reading the state topic again from its start,
    // where the ledger journal's republished entry is this process's own) is stale.
    if (previous && ledgerStage(entry) < ledgerStage(previous)) return;
    this.#entries.set(key, entry);
    const keys = this.#bySubmission.get(submissionId) ?? new Set<string>();
    keys.add(key);
    this.#bySubmission.set(submissionId, keys);
    for (const task of entry.tasks) {
      for (const position of task.positions) {
        // A record is held by the newest submission that holds it. An intent whose submitter
        // died stays in the state topic after another submission adopted its records (until
        // they are committed): read after that submission's bulk (state topic partitions
        // come in any order), it must not take the records back, or they are looked up again.
        const claim = this.#byRecord.get(position);
        if (claim && submissionOf(claim.entry) !== submissionId) {
          this.#contested.set(position, true);
          if (claim.entry.createdAt > entry.createdAt) continue;
        }
        this.#byRecord.set(position, { entry, task });
      }
    }
    // The records it no longer holds (cut to the quota granted) are free; the others point here now.
    if (previous && previous !== entry) this.#unindexRecords(previous);
    this.#wake(submissionId);
  }

  #wake(submissionId: string): void {
    const waiters = this.#waiters.get(submissionId);
    if (!waiters) return;
    this.#waiters.delete(submissionId);
    for (const wake of waiters) wake();
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
