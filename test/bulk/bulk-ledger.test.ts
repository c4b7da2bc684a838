import { describe, expect, it } from 'vitest';
import { BulkLedger, memoryLedgerStore, type LedgerEntry } from '../../src/bulk/bulk-ledger.ts';

const at = (partition: number, offset: number) => ({ topic: 'partners', partition, offset });
const task = (id: string, partition: number, offset: number) => ({
  taskId: id,
  hash: `h-${id}`,
  positions: [at(partition, offset)],
});

describe('BulkLedger', () => {
  it('finds a record under its intent, then under its bulk', async () => {
    const ledger = new BulkLedger(memoryLedgerStore());
    await ledger.intend('s1', [task('a', 0, 1)], { leaseMs: 60_000, paid: false });
    expect(ledger.find(at(0, 1))).toMatchObject({ submissionId: 's1', taskId: 'a' });
    expect(ledger.find(at(0, 1))?.bulkId).toBeUndefined();
    await ledger.record('s1', 'bulk-1', [task('a', 0, 1)]);
    expect(ledger.find(at(0, 1))).toMatchObject({ submissionId: 's1', bulkId: 'bulk-1' });
  });

  it('regression: records left out when a bulk is cut to the quota granted are free for another submission', async () => {
    const ledger = new BulkLedger(memoryLedgerStore());
    await ledger.intend('s1', [task('a', 0, 1), task('b', 0, 2)], { leaseMs: 60_000, paid: false });
    await ledger.intend('s1', [task('a', 0, 1)], { leaseMs: 60_000, paid: true });
    expect(ledger.find(at(0, 2))).toBeUndefined();
    expect(ledger.find(at(0, 1))).toMatchObject({ submissionId: 's1', paid: true });
  });

  it("regression: a submission's unpaid intent read after its paid one (the follower reading the state topic from its start, after a restart republished the paid intent from its journal) took the records back to unpaid, and their units were consumed again", async () => {
    const unpaid = {
      key: 's1/partners:0',
      submissionId: 's1',
      leaseUntil: 1,
      createdAt: 1,
      tasks: [task('a', 0, 1)],
    };
    const ledger = new BulkLedger({
      ...memoryLedgerStore(),
      load: async () => [{ ...unpaid, paid: true, createdAt: 2 }, unpaid],
    });
    await ledger.load();
    expect(ledger.find(at(0, 1))).toMatchObject({ submissionId: 's1', paid: true });
  });

  it('releases an entry once its partition is committed past all of its records', async () => {
    const ledger = new BulkLedger(memoryLedgerStore());
    await ledger.record('s1', 'bulk-1', [task('a', 0, 1), task('b', 1, 5)]);
    expect(await ledger.release([{ topic: 'partners', partition: 0, offset: 2 }])).toEqual([]);
    expect(ledger.find(at(0, 1))).toBeUndefined();
    expect(ledger.find(at(1, 5))?.bulkId).toBe('bulk-1');
    expect(await ledger.release([{ topic: 'partners', partition: 1, offset: 6 }])).toEqual(['bulk-1']);
    expect(ledger.size).toBe(0);
  });

  it('settles an intent whose writer left the group without waiting for its lease', async () => {
    const ledger = new BulkLedger(memoryLedgerStore());
    await ledger.intend('s1', [task('a', 0, 1)], { leaseMs: 3_600_000, paid: true, owner: 'member-1' });
    await ledger.settled(at(0, 1), 's1', async (owner) => owner !== 'member-1');
    expect(ledger.find(at(0, 1))?.bulkId).toBeUndefined();
  });

  it('regression: an intent of a member still in the group is waited for past its lease (a broker outage stops renewals, not the submission)', async () => {
    let now = 0;
    const ledger = new BulkLedger(memoryLedgerStore(), () => now);
    await ledger.intend('s1', [task('a', 0, 1)], { leaseMs: 1_000, paid: true, owner: 'member-1' });
    now = 5_000;
    let settled = false;
    const waiting = ledger.settled(at(0, 1), 's1', async () => true).then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(settled).toBe(false);
    await ledger.record('s1', 'bulk-1', [task('a', 0, 1)]);
    await waiting;
    expect(ledger.find(at(0, 1))?.bulkId).toBe('bulk-1');
  });

  it('regression: an intent renewal that fires while the bulk is being recorded does not reopen it (records waited on it forever after a broker outage)', async () => {
    // A store whose writes complete only when the test says so, in the order they were made,
    // as the state topic's writes do while the broker is away.
    const store = memoryLedgerStore();
    const held: (() => void)[] = [];
    const ledger = new BulkLedger({
      ...store,
      save: (entries) =>
        new Promise<void>((resolve) => held.push(() => void store.save(entries).then(resolve))),
    });
    const tasks = [task('a', 0, 1)];
    const intended = ledger.intend('s1', tasks, { leaseMs: 60_000, paid: true, owner: 'm1' });
    held.shift()?.();
    await intended;
    const recorded = ledger.record('s1', 'bulk-1', tasks);
    const renewed = ledger.intend('s1', tasks, { leaseMs: 60_000, paid: true, owner: 'm1' });
    while (held.length > 0) held.shift()?.();
    await Promise.all([recorded, renewed]);
    while (held.length > 0) held.shift()?.();
    expect(ledger.find(at(0, 1))).toMatchObject({ submissionId: 's1', bulkId: 'bulk-1' });
    expect((await store.load()).map((entry) => entry.bulkId)).toEqual(['bulk-1']);
  });

  it('regression: an intent renewal that fires while the intent is being withdrawn does not bring it back (records waited on it forever after a broker outage)', async () => {
    const store = memoryLedgerStore();
    const held: (() => void)[] = [];
    const release = () => {
      while (held.length > 0) held.shift()?.();
    };
    const ledger = new BulkLedger({
      ...store,
      save: (entries) =>
        new Promise<void>((resolve) => held.push(() => void store.save(entries).then(resolve))),
      remove: (keys) =>
        new Promise<void>((resolve) => held.push(() => void store.remove(keys).then(resolve))),
    });
    const tasks = [task('a', 0, 1)];
    const intended = ledger.intend('s1', tasks, { leaseMs: 60_000, paid: false, owner: 'm1' });
    release();
    await intended;
    const withdrawn = ledger.abandon('s1');
    const renewed = ledger.intend('s1', tasks, { leaseMs: 60_000, paid: false, owner: 'm1' });
    release();
    await Promise.all([withdrawn, renewed]);
    release();
    expect(ledger.find(at(0, 1))).toBeUndefined();
    expect(await store.load()).toEqual([]);
  });

  it('regression: an intent delivered again after its bulk was recorded (the follower re-reading the state topic) does not reopen it', async () => {
    const store = memoryLedgerStore();
    let follower: { recorded(entry: LedgerEntry): void } | undefined;
    const ledger = new BulkLedger({
      ...store,
      follow: async (changes) => {
        follower = changes;
        return async () => {};
      },
    });
    await ledger.follow(() => {});
    const tasks = [task('a', 0, 1)];
    await ledger.intend('s1', tasks, { leaseMs: 60_000, paid: true, owner: 'm1' });
    const [intent] = await store.load();
    await ledger.record('s1', 'bulk-1', tasks);
    follower?.recorded(intent as LedgerEntry);
    expect(ledger.find(at(0, 1))).toMatchObject({ submissionId: 's1', bulkId: 'bulk-1' });
  });

  it('regression: an adopted intent left in the state topic does not shadow the newer bulk of its records, whatever order a restart reads them in (a bulk paid again after kill -9)', async () => {
    // Member m1 paid for an intent and died; m2 adopted it and recorded bulk-2 for the same
    // records, then died before committing them. The stale intent stays until they are committed.
    const tasks = [task('a', 1, 400), task('b', 1, 401)];
    const stale: LedgerEntry = {
      key: 's1/partners:1',
      submissionId: 's1',
      leaseUntil: 61_000,
      paid: true,
      owner: 'm1',
      createdAt: 1_000,
      tasks,
    };
    const adopter: LedgerEntry = {
      key: 's2/partners:1',
      submissionId: 's2',
      bulkId: 'bulk-2',
      createdAt: 40_000,
      tasks,
    };
    for (const order of [
      [stale, adopter],
      [adopter, stale],
    ]) {
      const ledger = new BulkLedger({ ...memoryLedgerStore(), load: async () => order });
      await ledger.load();
      expect(ledger.find(at(1, 400))).toMatchObject({ submissionId: 's2', bulkId: 'bulk-2' });
      expect(ledger.find(at(1, 401))).toMatchObject({ submissionId: 's2', bulkId: 'bulk-2' });
    }
  });

  it("regression: an adopter's intent withdrawn (stopped, or its partition moved during the quota wait) took its records' claims from the dead member's paid intent it had adopted, so a follower paid for them again (a restart's load was right); now they go back to that intent", async () => {
    // m1 paid for r and died before creating the bulk; m2 adopted r into its own intent, then
    // withdrew it (or left r out when cut): m3, following the state topic, reads r next.
    const r = at(3, 42);
    const dead: LedgerEntry = {
      key: 's1/partners:3',
      submissionId: 's1',
      leaseUntil: 1_000,
      paid: true,
      owner: 'm1',
      createdAt: 1_000,
      tasks: [task('a', 3, 42)],
    };
    const adopting: LedgerEntry = {
      key: 's2/partners:3',
      submissionId: 's2',
      leaseUntil: 90_000,
      owner: 'm2',
      createdAt: 30_000,
      tasks: [{ ...task('b', 3, 42), paid: true }, task('c', 3, 43)],
    };
    for (const withdraw of ['removed', 'cut'] as const) {
      let follower: { recorded(entry: LedgerEntry): void; removed(key: string): void } | undefined;
      const ledger = new BulkLedger({
        ...memoryLedgerStore(),
        follow: async (changes) => {
          follower = changes;
          return async () => {};
        },
      });
      await ledger.follow(() => {});
      follower?.recorded(dead);
      follower?.recorded(adopting);
      expect(ledger.find(r)).toMatchObject({ submissionId: 's2', taskId: 'b', paid: true });
      if (withdraw === 'removed') follower?.removed('s2/partners:3');
      else follower?.recorded({ ...adopting, paid: true, tasks: [task('c', 3, 43)] });
      expect(ledger.find(r), withdraw).toMatchObject({ submissionId: 's1', taskId: 'a', paid: true });
      expect(ledger.find(at(3, 43)), withdraw).toEqual(
        withdraw === 'removed' ? undefined : expect.objectContaining({ submissionId: 's2', taskId: 'c' }),
      );
    }
  });

  it('settles an intent when its bulk is recorded', async () => {
    const ledger = new BulkLedger(memoryLedgerStore());
    await ledger.intend('s1', [task('a', 0, 1)], { leaseMs: 3_600_000, paid: true, owner: 'member-1' });
    const settled = ledger.settled(at(0, 1), 's1', async () => true);
    await ledger.record('s1', 'bulk-1', [task('a', 0, 1)]);
    await settled;
    expect(ledger.find(at(0, 1))?.bulkId).toBe('bulk-1');
  });
});
