import { describe, expect, it } from 'vitest';
import { QuotaGate, type QuotaStatus } from '../../src/quota/quota-gate.ts';

function gate(answers: QuotaStatus[]) {
  const asked: number[] = [];
  const events: string[] = [];
  const sleeps: number[] = [];
  const quota = new QuotaGate(
    { consume: async (amount) => (asked.push(amount), answers.shift() ?? 'OK') },
    { initialDelayMs: 100, maxDelayMs: 1000, random: () => 1, sleep: async (ms) => void sleeps.push(ms) },
    {
      onExhausted: () => events.push('exhausted'),
      onRestored: () => events.push('restored'),
      onConsumed: (n) => events.push(`consumed ${n}`),
    },
  );
  return { quota, asked, events, sleeps };
}

describe('QuotaGate', () => {
  it('consumes the batch task count before a bulk goes out', async () => {
    const { quota, asked, events } = gate(['OK']);
    await quota.acquire(250);
    expect(asked).toEqual([250]);
    expect(events).toEqual(['consumed 250']);
  });

  it('on OVER_LIMIT reports exhaustion once, backs off exponentially and reports the restore', async () => {
    const { quota, asked, events, sleeps } = gate([
      'OVER_LIMIT',
      'OVER_LIMIT',
      'OVER_LIMIT',
      'OVER_LIMIT',
      'OVER_LIMIT',
      'OK',
    ]);
    await quota.acquire(10);
    expect(asked).toHaveLength(6);
    expect(events).toEqual(['exhausted', 'restored', 'consumed 10']);
    expect(sleeps).toEqual([100, 200, 400, 800, 1000]);
  });

  it('serves callers in order, one at a time', async () => {
    const { quota, asked } = gate(['OVER_LIMIT', 'OK', 'OK']);
    await Promise.all([quota.acquire(1), quota.acquire(2)]);
    expect(asked).toEqual([1, 1, 2]);
  });

  it('lets waiting callers go when closed', async () => {
    const { quota } = gate(Array(100).fill('OVER_LIMIT'));
    const waiting = quota.acquire(5);
    quota.close();
    await expect(waiting).rejects.toMatchObject({ code: 'QUOTA_GATE_CLOSED' });
  });
});
