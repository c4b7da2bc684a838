import { afterEach, describe, expect, it, vi } from 'vitest';
import { Batcher } from '../../src/pipeline/batcher.ts';
import type { PartnerWork } from '../../src/pipeline/records.ts';

const work = (id: string): PartnerWork => ({
  id,
  partnerId: id,
  kind: 'lookup',
  records: [],
  state: 'scheduled',
  attempts: 0,
  epoch: 1,
});

describe('Batcher', () => {
  afterEach(() => vi.useRealTimers());

  it('sends a bulk as soon as it holds maxTasks tasks', () => {
    const batches: string[][] = [];
    const batcher = new Batcher({ maxTasks: 2, lingerMs: 1000 }, (b) => batches.push(b.map((w) => w.id)));
    batcher.add(work('a'));
    expect(batches).toEqual([]);
    batcher.add(work('b'));
    expect(batches).toEqual([['a', 'b']]);
  });

  it('sends a partial bulk once its oldest task has lingered lingerMs', () => {
    vi.useFakeTimers();
    const batches: string[][] = [];
    const batcher = new Batcher({ maxTasks: 10, lingerMs: 200 }, (b) => batches.push(b.map((w) => w.id)));
    batcher.add(work('a'));
    vi.advanceTimersByTime(100);
    batcher.add(work('b'));
    vi.advanceTimersByTime(99);
    expect(batches).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(batches).toEqual([['a', 'b']]);
  });

  it('marks work queued while waiting and submitted once sent', () => {
    const sent: PartnerWork[] = [];
    const batcher = new Batcher({ maxTasks: 5, lingerMs: 1000 }, (b) => sent.push(...b));
    const w = work('a');
    batcher.add(w);
    expect(w.state).toBe('queued');
    batcher.flush();
    expect(sent[0]?.state).toBe('submitted');
    batcher.close();
  });
});
