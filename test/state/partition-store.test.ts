import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { PartitionStore } from '../../src/state/partition-store.ts';

describe('PartitionStore', () => {
  it('restores in full a file of the format before partner records were kept: its checkpoint would skip them', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'partition-store-unit-')), 'p0.sqlite');
    const earlier = new DatabaseSync(path);
    earlier.exec(`
      CREATE TABLE partners (id TEXT PRIMARY KEY, state TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE checkpoint (one INTEGER PRIMARY KEY CHECK (one = 1), changelog TEXT NOT NULL, offset INTEGER NOT NULL);
      INSERT INTO partners VALUES ('P-1', '{"hash":"h1","svcId":null,"outcome":"NO_MATCH","bestCandidate":null}');
      INSERT INTO checkpoint VALUES (1, 'partners.storage', 42);
    `);
    earlier.close();
    const store = new PartitionStore(path);
    expect(store.size).toBe(0);
    expect(store.checkpoint).toBeUndefined();
    store.apply([], { changelog: 'partners.storage', offset: 7 });
    store.close();
    const reopened = new PartitionStore(path);
    expect(reopened.checkpoint).toEqual({ changelog: 'partners.storage', offset: 7 });
    reopened.close();
  });
});
