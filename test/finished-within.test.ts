// A close given a bound: the stop goes on past a close still pending, and hears of one that failed.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { finishedWithin } from '../src/finished-within.ts';

describe('finishedWithin', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('is true for a promise fulfilled within the bound', async () => {
    const waiting = finishedWithin(Promise.resolve('closed'), 1_000);
    await expect(waiting).resolves.toBe(true);
  });

  it('is false for a promise still pending at the bound, which is left to finish', async () => {
    const close = Promise.withResolvers<undefined>();
    const waiting = finishedWithin(close.promise, 1_000);
    await vi.advanceTimersByTimeAsync(999);
    let answer: boolean | undefined;
    void waiting.then((value) => (answer = value));
    await vi.advanceTimersByTimeAsync(0);
    expect(answer).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await expect(waiting).resolves.toBe(false);
    close.resolve(undefined);
  });

  it('rejects with the error of a promise rejected within the bound', async () => {
    await expect(finishedWithin(Promise.reject(new Error('refused')), 1_000)).rejects.toThrow('refused');
  });

  it('leaves no unhandled rejection behind when a promise rejects after the bound', async () => {
    const close = Promise.withResolvers<undefined>();
    const waiting = finishedWithin(close.promise, 1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(waiting).resolves.toBe(false);
    vi.useRealTimers();
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      close.reject(new Error('failed late'));
      // Node reports an unhandled rejection once the microtasks have run, before the next macrotask.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });
});
