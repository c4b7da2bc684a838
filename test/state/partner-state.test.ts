// PartnerState's lifecycle races, ordered by a changelog that answers when the test says so
// (it stands in for the storage topic, whose timing cannot be forced; the restore itself is
// proven against the real broker in partner-state.integration.test.ts).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PartnerState, type ChangelogOffsets, type StateChangelog } from '../../src/state/partner-state.ts';
import { storedPartner } from '../support/stored-partners.ts';

const partition = { topic: 'partners', partition: 1 };

function heldChangelog() {
  const offsets = Promise.withResolvers<Map<number, ChangelogOffsets>>();
  const changelog: StateChangelog = {
    name: 'partners.storage',
    offsets: () => offsets.promise,
    read: async (ranges, apply) => {
      for (const range of ranges) apply(range.partition, [], range.to);
    },
  };
  const answer = () => offsets.resolve(new Map([[1, { low: 0, high: 10 }]]));
  return { changelog, answer };
}

const stateDir = () => mkdtempSync(join(tmpdir(), 'partner-state-unit-'));

describe('PartnerState', () => {
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
});
