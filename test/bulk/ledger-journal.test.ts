// The bulk ledger's journal on a real directory: what a killed process wrote to it and the
// state topic never had is written there by the next start on the same directory. The state
// topic is a memory store here; a kill is a store that stops taking writes, as a killed
// process's state topic writes stop.
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BulkLedger, memoryLedgerStore, type LedgerStore } from '../../src/bulk/bulk-ledger.ts';
import {
  adoptLedgerJournal,
  JOURNAL_DIR,
  journaledLedgerStore,
  LedgerJournal,
  type Republished,
} from '../../src/bulk/ledger-journal.ts';

const TOPIC = 'partner-enrich-state';
const at = (offset: number) => ({ topic: 'partners', partition: 0, offset });
const task = (id: string, offset: number) => ({ taskId: id, hash: `h-${id}`, positions: [at(offset)] });
const lease = { leaseMs: 60_000, owner: 'member-1' };

const stateDir = () => mkdtempSync(join(tmpdir(), 'ledger-journal-'));
const journalFiles = (dir: string) => readdirSync(join(dir, JOURNAL_DIR));

/** The state topic as a killed process last saw it: writes from `after` on never land. */
function killedAt(store: LedgerStore, after: 'paid' | 'bulk'): LedgerStore {
  return {
    ...store,
    save: (entries) =>
      entries.some((e) => (after === 'bulk' ? e.bulkId !== undefined : e.paid || e.bulkId !== undefined))
        ? new Promise<void>(() => {})
        : store.save(entries),
  };
}

/** A process's ledger on `dir`, its state topic `store`; loaded, as at a start. */
async function ledgerOn(
  dir: string,
  store: LedgerStore,
  republished?: (counts: Republished) => void,
): Promise<BulkLedger> {
  const ledger = new BulkLedger(journaledLedgerStore(store, new LedgerJournal(dir, TOPIC), republished));
  await ledger.load();
  return ledger;
}

describe('the bulk ledger journal', () => {
  it('keeps nothing once the state topic has the writes', async () => {
    const dir = stateDir();
    const ledger = await ledgerOn(dir, memoryLedgerStore());
    await ledger.intend('s1', [task('a', 1)], { ...lease, paid: false });
    await ledger.intend('s1', [task('a', 1)], { ...lease, paid: true });
    await ledger.record('s1', 'bulk-1', [task('a', 1)]);
    expect(journalFiles(dir)).toEqual([]);
  });

  it('regression: a bulk created just before a kill, its record not yet in the state topic, is written there by the next start on the same directory (the restart created it and paid its tasks again)', async () => {
    const dir = stateDir();
    const topic = memoryLedgerStore();
    const killed = await ledgerOn(dir, killedAt(topic, 'bulk'));
    await killed.intend('s1', [task('a', 1)], { ...lease, paid: false });
    await killed.intend('s1', [task('a', 1)], { ...lease, paid: true });
    void killed.record('s1', 'bulk-1', [task('a', 1)]);
    expect((await topic.load()).map((e) => e.bulkId)).toEqual([undefined]);

    const counts: Republished[] = [];
    const restarted = await ledgerOn(dir, topic, (c) => counts.push(c));
    expect(restarted.find(at(1))).toMatchObject({ submissionId: 's1', bulkId: 'bulk-1' });
    expect((await topic.load()).map((e) => e.bulkId)).toEqual(['bulk-1']);
    expect(counts).toEqual([{ paid: 0, bulks: 1, records: 1 }]);
    expect(journalFiles(dir)).toEqual([]);
  });

  it('regression: a consume answered just before a kill, its paid intent not yet in the state topic, is written paid by the next start (the adopter consumed again)', async () => {
    const dir = stateDir();
    const topic = memoryLedgerStore();
    const killed = await ledgerOn(dir, killedAt(topic, 'paid'));
    await killed.intend('s1', [task('a', 1)], { ...lease, paid: false });
    void killed.intend('s1', [task('a', 1)], { ...lease, paid: true });

    const counts: Republished[] = [];
    const restarted = await ledgerOn(dir, topic, (c) => counts.push(c));
    expect(restarted.find(at(1))).toMatchObject({ submissionId: 's1', paid: true });
    expect(counts).toEqual([{ paid: 1, bulks: 0, records: 1 }]);
    expect((await topic.load()).map((e) => e.paid)).toEqual([true]);
  });

  it('writes nothing the state topic has as far or no longer has: a record that landed, an entry released', async () => {
    const dir = stateDir();
    const topic = memoryLedgerStore();
    const killed = await ledgerOn(dir, killedAt(topic, 'bulk'));
    await killed.intend('s1', [task('a', 1)], { ...lease, paid: true });
    void killed.record('s1', 'bulk-1', [task('a', 1)]);
    await killed.intend('s2', [task('b', 2)], { ...lease, paid: true });
    void killed.record('s2', 'bulk-2', [task('b', 2)]);
    // s1's record landed after all; s2's records were committed and its entry released.
    await topic.save([
      { key: 's1/partners:0', submissionId: 's1', bulkId: 'bulk-1', createdAt: 1, tasks: [task('a', 1)] },
    ]);
    await topic.remove(['s2/partners:0']);
    const saved: unknown[] = [];
    const watched: LedgerStore = {
      ...topic,
      save: (entries) => (saved.push(...entries), topic.save(entries)),
    };

    const restarted = await ledgerOn(dir, watched);
    expect(saved).toEqual([]);
    expect(restarted.find(at(2))).toBeUndefined();
    expect(journalFiles(dir)).toEqual([]);
  });

  it("leaves a killed submitter's records with the member that adopted them meanwhile", async () => {
    const dir = stateDir();
    const topic = memoryLedgerStore();
    let now = 1_000;
    const killed = new BulkLedger(
      journaledLedgerStore(killedAt(topic, 'bulk'), new LedgerJournal(dir, TOPIC)),
      () => now,
    );
    await killed.intend('s1', [task('a', 1)], { ...lease, paid: true });
    void killed.record('s1', 'bulk-1', [task('a', 1)]);
    // Another member adopted s1's record and created a bulk of its own before this restart.
    now = 5_000;
    const adopter = new BulkLedger(topic, () => now);
    await adopter.intend('s2', [{ ...task('a', 1), paid: true }], {
      leaseMs: 60_000,
      owner: 'member-2',
      paid: true,
    });
    await adopter.record('s2', 'bulk-2', [task('a', 1)]);

    const restarted = await ledgerOn(dir, topic);
    expect(restarted.find(at(1))).toMatchObject({ submissionId: 's2', bulkId: 'bulk-2' });
  });

  it('keeps a write the state topic refused for the next start', async () => {
    const dir = stateDir();
    const topic = memoryLedgerStore();
    const refusing: LedgerStore = {
      ...topic,
      save: async (entries) => {
        if (entries.some((e) => e.bulkId)) throw new Error('state topic away');
        return topic.save(entries);
      },
    };
    const ledger = await ledgerOn(dir, refusing);
    await ledger.intend('s1', [task('a', 1)], { ...lease, paid: true });
    await expect(ledger.record('s1', 'bulk-1', [task('a', 1)])).rejects.toThrow('state topic away');
    expect(journalFiles(dir)).toEqual(['s1.json']);

    expect((await ledgerOn(dir, topic)).find(at(1))?.bulkId).toBe('bulk-1');
  });

  it("takes over a dead private directory's journal kept for the same state topic, leaves another's", () => {
    const dead = stateDir();
    const alive = stateDir();
    mkdirSync(join(dead, JOURNAL_DIR));
    const entries = [{ key: 's1/partners:0', submissionId: 's1', bulkId: 'b', createdAt: 1, tasks: [] }];
    writeFileSync(join(dead, JOURNAL_DIR, 's1.json'), JSON.stringify({ topic: TOPIC, entries }));
    writeFileSync(join(dead, JOURNAL_DIR, 's2.json'), JSON.stringify({ topic: 'other-state', entries }));
    writeFileSync(join(dead, JOURNAL_DIR, 's3.json'), '{"topic": "partner-enrich-st');

    writeFileSync(join(dead, JOURNAL_DIR, 's4.json.tmp'), '{"topic": "partner-enrich-st');

    adoptLedgerJournal(dead, alive, TOPIC);
    expect(journalFiles(alive)).toEqual(['s1.json']);
    expect(new LedgerJournal(alive, TOPIC).pending().entries).toEqual(entries);
    // Another topic's stays for its own pipeline; what cannot be read goes.
    expect(journalFiles(dead)).toEqual(['s2.json']);
  });
});
