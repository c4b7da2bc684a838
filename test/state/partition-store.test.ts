import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { PartitionStore } from '../../src/state/partition-store.ts';

describe('PartitionStore', () => {
  it.each([
    { format: 0, why: 'before partner records were kept: its checkpoint would skip them' },
    { format: 2, why: 'with partners in the id-ordered table: it is not converted in place' },
    {
      format: 3,
      why: 'whose checkpoint has no time: it cannot tell which tombstones compaction removed since',
    },
  ])('restores in full a file of format $format, $why', ({ format }) => {
    const path = join(mkdtempSync(join(tmpdir(), 'partition-store-unit-')), 'p0.sqlite');
    const earlier = new DatabaseSync(path);
    earlier.exec(`
      CREATE TABLE partners (id TEXT PRIMARY KEY, state TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE checkpoint (one INTEGER PRIMARY KEY CHECK (one = 1), changelog TEXT NOT NULL, offset INTEGER NOT NULL);
      INSERT INTO partners VALUES ('P-1', '{"hash":"h1","svcId":null,"outcome":"NO_MATCH","bestCandidate":null}');
      INSERT INTO checkpoint VALUES (1, 'partners.storage', 42);
      PRAGMA user_version = ${format};
    `);
    earlier.close();
    const store = new PartitionStore(path);
    expect(store.size).toBe(0);
    expect(store.checkpoint).toBeUndefined();
    store.apply(
      [
        {
          partnerId: 'P-1',
          stored: { hash: 'h2', svcId: null, outcome: 'NO_MATCH', bestCandidate: null } as never,
        },
      ],
      { changelog: 'partners.storage', offset: 7, at: 1_000 },
    );
    store.close();
    const reopened = new PartitionStore(path);
    expect(reopened.checkpoint).toEqual({ changelog: 'partners.storage', offset: 7, at: 1_000 });
    expect(reopened.get('P-1')).toMatchObject({ hash: 'h2' });
    reopened.close();
  });

  it('answers a write at once and has it on disk, for any other reader, after the turn of the event loop it was made in', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'partition-store-unit-')), 'p0.sqlite');
    const store = new PartitionStore(path);
    const stored = {
      hash: 'h1',
      svcId: null,
      outcome: 'NO_MATCH' as const,
      bestCandidate: null,
      record: { partnerId: 'P-1' } as never,
      matchedAt: 1,
      source: null,
    };
    store.set('P-1', stored);
    store.set('P-2', { ...stored, hash: 'h2' });
    store.delete('P-2');
    expect(store.get('P-1')).toEqual(stored);
    expect(store.get('P-2')).toBeUndefined();
    await nextTurn();
    const reader = new DatabaseSync(path, { readOnly: true });
    expect(reader.prepare('SELECT id FROM partners').all()).toEqual([{ id: 'P-1' }]);
    reader.close();
    store.set('P-3', stored);
    store.close();
    const reopened = new PartitionStore(path);
    expect(reopened.size).toBe(2);
    reopened.close();
  });
});
