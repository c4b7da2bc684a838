// PartnerState's lifecycle races, ordered by a changelog that answers when the test says so
// (it stands in for the storage topic, whose timing cannot be forced; the restore itself is
// proven against the real broker in partner-state.integration.test.ts).
import { mkdtempSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StateChange } from '../../src/state/partition-store.ts';
import { PartnerState, type ChangelogOffsets, type StateChangelog } from '../../src/state/partner-state.ts';
import { storedPartner } from '../support/stored-partners.ts';

const partition = { topic: 'partners', partition: 1 };
const DAY = 86_400_000;
const HOUR = 3_600_000;

/**
 * A stand-in for storage partition 1 as compaction leaves it: records by offset, an offset
 * compaction removed is missing while the partition's low offset stays. The broker cannot be
 * made to drop a tombstone on demand (its cleaner decides when, after delete.retention.ms).
 */
function compactedChangelog(records: Map<number, StateChange>, high: number) {
  const reads: { from: number; to: number }[] = [];
  const changelog: StateChangelog = {
    name: 'partners.storage',
    offsets: async () => new Map([[1, { low: 0, high }]]),
    tombstoneRetentionMs: async () => DAY,
    read: async (ranges, apply) => {
      for (const { partition: p, from, to } of ranges) {
        reads.push({ from, to });
        apply(
          p,
          [...records].filter(([offset]) => offset >= from && offset < to).map(([, change]) => change),
          to,
        );
      }
    },
  };
  return { changelog, reads };
}

const change = (partnerId: string, deleted = false): StateChange => ({
  partnerId,
  stored: deleted ? null : storedPartner(partnerId),
});
/** P-0..P-9 at offsets 0..9, then Q-10..Q-19 at 10..19 with a tombstone of P-3 at 15. */
const history = () =>
  new Map<number, StateChange>([
    ...Array.from({ length: 10 }, (_, i) => [i, change(`P-${i}`)] as const),
    ...Array.from({ length: 10 }, (_, i) => [10 + i, change(`Q-${10 + i}`)] as const),
    [15, change('P-3', true)],
  ]);
const firstTen = () => new Map([...history()].filter(([offset]) => offset < 10));

function heldChangelog() {
  const offsets = Promise.withResolvers<Map<number, ChangelogOffsets>>();
  const changelog: StateChangelog = {
    name: 'partners.storage',
    offsets: () => offsets.promise,
    tombstoneRetentionMs: async () => DAY,
    read: async (ranges, apply) => {
      for (const range of ranges) apply(range.partition, [], range.to);
    },
  };
  const answer = () => offsets.resolve(new Map([[1, { low: 0, high: 10 }]]));
  return { changelog, answer };
}

const stateDir = () => mkdtempSync(join(tmpdir(), 'partner-state-unit-'));

/** Partition 1's table of finished records made anew with the columns an earlier version had beyond id, offset and timestamp. */
function finishedTableOf(dir: string, columns: string[]): void {
  const kept = ['id', 'offset', 'timestamp', ...columns].join(', ');
  const file = new DatabaseSync(join(dir, 'partners-1.sqlite'));
  file.exec(`
    CREATE TABLE finished_before (id TEXT PRIMARY KEY, offset INTEGER NOT NULL, timestamp INTEGER NOT NULL${columns.map((c) => `, ${c} INTEGER`).join('')});
    INSERT INTO finished_before SELECT ${kept} FROM finished;
    DROP TABLE finished;
    ALTER TABLE finished_before RENAME TO finished;
  `);
  file.close();
}

describe('PartnerState', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('regression: a restore under way when the state closes ends quietly (a stop exited 1: "statement has been finalized")', async () => {
    const { changelog, answer } = heldChangelog();
    const state = new PartnerState({ dir: stateDir(), changelog });
    const restoring = state.restore([partition]);
    state.close();
    answer();
    await expect(restoring).resolves.toBeUndefined();
    await expect(state.restore([partition])).resolves.toBeUndefined();
    expect(state.partitions).toEqual([]);
  });

  it('regression: a partition revoked while it restores ends its restore quietly instead of failing the pipeline', async () => {
    const { changelog, answer } = heldChangelog();
    const state = new PartnerState({ dir: stateDir(), changelog });
    const restoring = state.restore([partition]);
    state.release([partition]);
    answer();
    await expect(restoring).resolves.toBeUndefined();
    expect(state.partitions).toEqual([]);
    state.close();
  });

  it('regression: a restore writes every 5,000 changelog records to disk instead of holding 20,000 decoded states (2,000,000 partners restored at 278 MB RSS)', async () => {
    const delivered = Promise.withResolvers<undefined>();
    const rest = Promise.withResolvers<undefined>();
    const changelog: StateChangelog = {
      name: 'partners.storage',
      offsets: async () => new Map([[1, { low: 0, high: 6_000 }]]),
      tombstoneRetentionMs: async () => DAY,
      read: async (_ranges, apply) => {
        for (let offset = 0; offset < 5_000; offset += 1_000) {
          const changes = Array.from({ length: 1_000 }, (_, i) => {
            const partnerId = `P-${offset + i}`;
            return { partnerId, stored: storedPartner(partnerId) };
          });
          apply(1, changes, offset + 1_000);
        }
        delivered.resolve(undefined);
        await rest.promise;
        apply(1, [{ partnerId: 'P-5000', stored: storedPartner('P-5000') }], 6_000);
      },
    };
    const state = new PartnerState({ dir: stateDir(), changelog });
    const restoring = state.restore([partition]);
    await delivered.promise;
    // Still reading the changelog: the first 5,000 are in the file already.
    expect(state.size).toBe(5_000);
    expect(state.get(partition, 'P-4999')).toEqual(storedPartner('P-4999'));
    rest.resolve(undefined);
    await restoring;
    expect(state.size).toBe(5_001);
    state.close();
  });

  it('keeps what was set across a release and a new restore of the same file', async () => {
    const state = new PartnerState({ dir: stateDir() });
    await state.restore([partition]);
    const stored = storedPartner('P-1', { hash: 'h1', svcId: 'S-1', outcome: 'MATCH' });
    state.set(partition, 'P-1', stored);
    state.release([partition]);
    expect(state.get(partition, 'P-1')).toBeUndefined();
    await state.restore([partition]);
    expect(state.get(partition, 'P-1')).toEqual(stored);
    expect(state.size).toBe(1);
    state.close();
  });

  it('reads a partition in chunks in partner id order, each after the last id of the one before', async () => {
    const state = new PartnerState({ dir: stateDir() });
    await state.restore([partition]);
    const stored = (partnerId: string) => storedPartner(partnerId);
    for (const id of ['P-3', 'P-1', 'P-5', 'P-2', 'P-4']) state.set(partition, id, stored(id));
    const ids = (chunk: { partnerId: string }[]) => chunk.map(({ partnerId }) => partnerId);
    expect(ids(state.scan(partition, '', 2))).toEqual(['P-1', 'P-2']);
    expect(ids(state.scan(partition, 'P-2', 2))).toEqual(['P-3', 'P-4']);
    expect(state.scan(partition, 'P-4', 2)).toEqual([{ partnerId: 'P-5', stored: stored('P-5') }]);
    expect(state.scan(partition, 'P-5', 2)).toEqual([]);
    expect(state.scan({ ...partition, partition: 9 }, '', 2)).toEqual([]);
  });

  /** A state file of the first ten records, checkpointed at 2026-01-01 (Date faked); still open. */
  async function checkpointedOnNewYear() {
    vi.useFakeTimers({ toFake: ['Date'] });
    const dir = stateDir();
    vi.setSystemTime(Date.UTC(2026, 0, 1));
    const first = new PartnerState({ dir, changelog: compactedChangelog(firstTen(), 10).changelog });
    await first.restore([partition]);
    await first.checkpoint(async () => {});
    return { dir, first };
  }

  const tombstone = { offset: 41, timestamp: 1_700_000_000_000 };

  it('regression: a delete left nothing to tell the tombstone that made it, read again, from one of a partner never stored (DELETE_UNKNOWN_PARTNER after a kill); the file keeps it across a warm restart until its position is committed', async () => {
    const dir = stateDir();
    const first = new PartnerState({ dir });
    await first.restore([partition]);
    first.set(partition, 'P-1', storedPartner('P-1'));
    first.delete(partition, 'P-1', tombstone);
    expect(first.get(partition, 'P-1')).toBeUndefined();
    expect(first.finishedBy(partition, 'P-1')).toEqual(tombstone);
    expect(first.finishedBy(partition, 'NEVER-STORED')).toBeUndefined();
    first.close();

    const second = new PartnerState({ dir });
    await second.restore([partition]);
    expect(second.finishedBy(partition, 'P-1')).toEqual(tombstone);
    // Committed up to the tombstone: it may still be read again. Past it: never.
    second.committed(partition, tombstone.offset);
    expect(second.finishedBy(partition, 'P-1')).toEqual(tombstone);
    second.committed(partition, tombstone.offset + 1);
    expect(second.finishedBy(partition, 'P-1')).toBeUndefined();
    second.close();
  });

  it('regression: a lookup that failed for good left nothing to tell its record, read again after a kill, from a new one (looked up and written twice); the state stays as it was and the file keeps the record until its position is committed', async () => {
    const dir = stateDir();
    const first = new PartnerState({ dir });
    await first.restore([partition]);
    const stored = storedPartner('P-1');
    first.set(partition, 'P-1', stored);
    const failedP1 = { offset: 50, timestamp: 1_700_000_000_000 };
    const failedP2 = { offset: 51, timestamp: 1_700_000_000_001 };
    first.lookupFailed(partition, 'P-1', stored, failedP1);
    first.lookupFailed(partition, 'P-2', undefined, failedP2);
    expect(first.get(partition, 'P-1')).toEqual(stored);
    expect(first.get(partition, 'P-2')).toBeUndefined();
    expect(first.finishedBy(partition, 'P-1')).toEqual(failedP1);
    expect(first.finishedBy(partition, 'P-2')).toEqual(failedP2);
    first.close();

    const second = new PartnerState({ dir });
    await second.restore([partition]);
    expect(second.get(partition, 'P-1')).toEqual(stored);
    expect(second.finishedBy(partition, 'P-1')).toEqual(failedP1);
    second.committed(partition, failedP1.offset + 1);
    expect(second.finishedBy(partition, 'P-1')).toBeUndefined();
    expect(second.finishedBy(partition, 'P-2')).toEqual(failedP2);
    second.close();
  });

  it('keeps the oldest record of a coalesced lookup that failed for good with it, in a file from before it was kept too', async () => {
    const dir = stateDir();
    const first = new PartnerState({ dir });
    await first.restore([partition]);
    first.lookupFailed(partition, 'P-0', undefined, { offset: 6, timestamp: 0 });
    first.close();
    // The file as the version before left it: no columns for the oldest record.
    finishedTableOf(dir, []);

    const second = new PartnerState({ dir });
    await second.restore([partition]);
    expect(second.finishedBy(partition, 'P-0')).toEqual({ offset: 6, timestamp: 0 });
    const coalesced = { offset: 12, timestamp: 12, coalescedFrom: { offset: 10, timestamp: 10 } };
    second.lookupFailed(partition, 'P-1', undefined, coalesced);
    second.close();
    const third = new PartnerState({ dir });
    await third.restore([partition]);
    expect(third.finishedBy(partition, 'P-1')).toEqual(coalesced);
    expect(third.finishedBy(partition, 'P-0')).toEqual({ offset: 6, timestamp: 0 });
    third.close();
  });

  it('regression: a file whose upgrade was killed between its two new columns (each committed alone) failed every later open; it gets the one missing', async () => {
    const dir = stateDir();
    const first = new PartnerState({ dir });
    await first.restore([partition]);
    first.lookupFailed(partition, 'P-0', undefined, { offset: 6, timestamp: 0 });
    first.close();
    // As the kill left it: from_offset added, from_timestamp not.
    finishedTableOf(dir, ['from_offset']);

    const second = new PartnerState({ dir });
    await second.restore([partition]);
    expect(second.finishedBy(partition, 'P-0')).toEqual({ offset: 6, timestamp: 0 });
    const coalesced = { offset: 12, timestamp: 12, coalescedFrom: { offset: 10, timestamp: 10 } };
    second.lookupFailed(partition, 'P-1', undefined, coalesced);
    expect(second.finishedBy(partition, 'P-1')).toEqual(coalesced);
    second.close();
  });

  it('tells the finished records of more partners than it holds ids of in memory (10,000), before and after a commit forgets some', async () => {
    const dir = stateDir();
    const state = new PartnerState({ dir });
    await state.restore([partition]);
    const input = (i: number) => ({ offset: 100 + i, timestamp: 1_700_000_000_000 + i });
    for (let i = 0; i < 10_002; i += 1) state.lookupFailed(partition, `P-${i}`, undefined, input(i));
    expect(state.finishedBy(partition, 'P-0')).toEqual(input(0));
    expect(state.finishedBy(partition, 'P-10001')).toEqual(input(10_001));
    expect(state.finishedBy(partition, 'NEVER-FAILED')).toBeUndefined();
    state.committed(partition, input(10_000).offset);
    expect(state.finishedBy(partition, 'P-9999')).toBeUndefined();
    expect(state.finishedBy(partition, 'P-10000')).toEqual(input(10_000));
    expect(state.finishedBy(partition, 'NEVER-FAILED')).toBeUndefined();
    state.close();
  });

  it('a file from before failures were kept (its table of deletes named `deleted`) keeps the deletes it holds', async () => {
    const dir = stateDir();
    const first = new PartnerState({ dir });
    await first.restore([partition]);
    first.set(partition, 'P-1', storedPartner('P-1'));
    first.delete(partition, 'P-1', tombstone);
    first.close();
    const file = new DatabaseSync(join(dir, 'partners-1.sqlite'));
    file.exec('ALTER TABLE finished RENAME TO deleted');
    file.close();

    const second = new PartnerState({ dir });
    await second.restore([partition]);
    expect(second.finishedBy(partition, 'P-1')).toEqual(tombstone);
    second.close();
  });

  it('a file given back to a version from before and then forward again (both tables) keeps the rows of each', async () => {
    const dir = stateDir();
    const first = new PartnerState({ dir });
    await first.restore([partition]);
    first.lookupFailed(partition, 'P-1', undefined, { offset: 7, timestamp: 1 });
    first.close();
    // What the version before makes of the file: its own table, with the deletes it did.
    const file = new DatabaseSync(join(dir, 'partners-1.sqlite'));
    file.exec(`
      CREATE TABLE deleted (id TEXT PRIMARY KEY, offset INTEGER NOT NULL, timestamp INTEGER NOT NULL);
      INSERT INTO deleted VALUES ('P-2', 8, 2);
    `);
    file.close();

    const second = new PartnerState({ dir });
    await second.restore([partition]);
    expect(second.finishedBy(partition, 'P-1')).toEqual({ offset: 7, timestamp: 1 });
    expect(second.finishedBy(partition, 'P-2')).toEqual({ offset: 8, timestamp: 2 });
    second.close();
  });

  it('regression: a fresh directory restored from the storage topic knows which tombstone deleted a partner (a partition moved, or a new disk, after a kill)', async () => {
    const { changelog } = compactedChangelog(
      new Map<number, StateChange>([
        [0, change('P-1')],
        [1, { partnerId: 'P-1', stored: null, finishedBy: tombstone }],
        [2, change('P-2')],
        // Written before storage tombstones named theirs.
        [3, change('P-2', true)],
      ]),
      4,
    );
    const state = new PartnerState({ dir: stateDir(), changelog });
    await state.restore([partition]);
    expect(state.get(partition, 'P-1')).toBeUndefined();
    expect(state.finishedBy(partition, 'P-1')).toEqual(tombstone);
    expect(state.finishedBy(partition, 'P-2')).toBeUndefined();
    state.close();
  });

  it('exactly-once: the tombstone behind a staged delete is known at once and stored with the delete once committed', async () => {
    const state = new PartnerState({ dir: stateDir() });
    await state.restore([partition]);
    state.set(partition, 'P-1', storedPartner('P-1'));
    state.staged(partition, tombstone.offset, () => state.delete(partition, 'P-1', tombstone));
    expect(state.finishedBy(partition, 'P-1')).toEqual(tombstone);
    state.applyStaged(partition, tombstone.offset + 1);
    expect(state.get(partition, 'P-1')).toBeUndefined();
    expect(state.finishedBy(partition, 'P-1')).toEqual(tombstone);
    state.close();
  });

  it('opens a file written before deletes were kept with its partners and checkpoint: no restore in full', async () => {
    const dir = stateDir();
    const old = new DatabaseSync(join(dir, 'partners-1.sqlite'));
    old.exec(`
      PRAGMA user_version = 4;
      CREATE TABLE partners (id TEXT PRIMARY KEY, state TEXT NOT NULL);
      CREATE TABLE checkpoint (
        one INTEGER PRIMARY KEY CHECK (one = 1), changelog TEXT NOT NULL, offset INTEGER NOT NULL,
        at INTEGER NOT NULL
      );
    `);
    for (const { partnerId, stored } of firstTen().values())
      old.prepare('INSERT INTO partners (id, state) VALUES (?, ?)').run(partnerId, JSON.stringify(stored));
    old.prepare('INSERT INTO checkpoint VALUES (1, ?, 10, ?)').run('partners.storage', Date.now());
    old.close();

    const { changelog, reads } = compactedChangelog(history(), 20);
    const state = new PartnerState({ dir, changelog });
    await state.restore([partition]);
    expect(reads).toEqual([{ from: 10, to: 20 }]);
    expect(state.size).toBe(18);
    state.delete(partition, 'P-4', tombstone);
    expect(state.finishedBy(partition, 'P-4')).toEqual(tombstone);
    state.close();
  });

  it('regression: a warm restore after the storage topic dropped a tombstone brought the deleted partner back', async () => {
    const { dir, first } = await checkpointedOnNewYear();
    first.close();

    // Away for 25 h: P-3 was deleted (15) and compaction removed its record (3) and, past
    // delete.retention.ms (24 h), the tombstone too; the partition still starts at 0.
    const compacted = history();
    compacted.delete(3);
    compacted.delete(15);
    vi.setSystemTime(Date.UTC(2026, 0, 1) + DAY + HOUR);
    const { changelog, reads } = compactedChangelog(compacted, 20);
    const second = new PartnerState({ dir, changelog });
    await second.restore([partition]);

    expect(second.get(partition, 'P-3')).toBeUndefined();
    expect(reads).toEqual([{ from: 0, to: 20 }]);
    expect(second.size).toBe(18);
    second.close();
  });

  it('reads only the tail while the checkpoint is younger than the tombstones, also for a partition no one wrote to', async () => {
    const { dir, first } = await checkpointedOnNewYear();
    // Two days without a write to the partition: each checkpoint moves the time all the same.
    vi.setSystemTime(Date.UTC(2026, 0, 3));
    await first.checkpoint(async () => {});
    first.close();

    vi.setSystemTime(Date.UTC(2026, 0, 3) + 20 * HOUR);
    const { changelog, reads } = compactedChangelog(history(), 20);
    const second = new PartnerState({ dir, changelog });
    await second.restore([partition]);

    expect(reads).toEqual([{ from: 10, to: 20 }]);
    expect(second.get(partition, 'P-3')).toBeUndefined();
    expect(second.size).toBe(18);
    second.close();
  });
});
