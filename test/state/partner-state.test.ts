// PartnerState's lifecycle races, ordered by a changelog that answers when the test says so
// (it stands in for the storage topic, whose timing cannot be forced; the restore itself is
// proven against the real broker in partner-state.integration.test.ts).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PartnerState, type ChangelogOffsets, type StateChangelog } from '../../src/state/partner-state.ts';

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

  it('keeps what was set across a release and a new restore of the same file', async () => {
    const state = new PartnerState({ dir: stateDir() });
    await state.restore([partition]);
    const stored = { hash: 'h1', svcId: 'S-1', outcome: 'MATCH' as const, bestCandidate: null };
    state.set(partition, 'P-1', stored);
    state.release([partition]);
    expect(state.get(partition, 'P-1')).toBeUndefined();
    await state.restore([partition]);
    expect(state.get(partition, 'P-1')).toEqual(stored);
    expect(state.size).toBe(1);
    state.close();
  });
});
