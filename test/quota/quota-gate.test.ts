import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuotaGate, type QuotaStatus } from '../../src/quota/quota-gate.ts';
import { usageQuotaCheck } from '../../src/quota/usage-quota-check.ts';
import { startTestSandbox, type TestSandbox } from '../sandbox/support/sandbox-fixtures.ts';

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

  it('once the window is exhausted, serves the callers that arrive in order, one at a time', async () => {
    const answers: QuotaStatus[] = ['OVER_LIMIT', 'OK', 'OK', 'OK'];
    const asked: number[] = [];
    const backoff = Promise.withResolvers<undefined>();
    const quota = new QuotaGate(
      { consume: async (amount) => (asked.push(amount), answers.shift() ?? 'OK') },
      { initialDelayMs: 100, maxDelayMs: 1000, sleep: () => backoff.promise },
      { onExhausted: () => {}, onRestored: () => {}, onConsumed: () => {} },
    );
    const first = quota.acquire(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(quota.exhausted).toBe(true);
    const later = [quota.acquire(2), quota.acquire(3)];
    backoff.resolve(undefined);
    expect(await Promise.all([first, ...later])).toEqual([1, 2, 3]);
    expect(asked).toEqual([1, 1, 2, 3]);
  });

  it('regression: lets consumes run side by side while the window has room (one slow consume held every bulk back)', async () => {
    const pending: (() => void)[] = [];
    const quota = new QuotaGate(
      {
        consume: () =>
          new Promise<QuotaStatus>((resolve) => {
            pending.push(() => resolve('OK'));
          }),
      },
      { initialDelayMs: 100, maxDelayMs: 1000 },
      { onExhausted: () => {}, onRestored: () => {}, onConsumed: () => {} },
    );
    const granted = Promise.all([quota.acquire(1), quota.acquire(2)]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(pending).toHaveLength(2);
    for (const resolve of pending) resolve();
    expect(await granted).toEqual([1, 2]);
  });

  it('draws what was paid ahead before consuming, and consumes only the rest', async () => {
    const { quota, asked } = gate(['OK', 'OK']);
    expect(await quota.prepay(30)).toBe(30);
    expect(await quota.acquire(20)).toBe(20);
    expect(await quota.acquire(25)).toBe(25);
    expect(asked).toEqual([30, 15]);
    expect(quota.credit).toBe(0);
  });

  it('keeps what was paid ahead from callers that do not draw it', async () => {
    const { quota, asked } = gate(['OK', 'OK']);
    await quota.prepay(30);
    expect(await quota.acquire(20, { fromCredit: false })).toBe(20);
    expect(asked).toEqual([30, 20]);
    expect(quota.credit).toBe(30);
  });

  it('lets waiting callers go when closed', async () => {
    const { quota } = gate(Array(100).fill('OVER_LIMIT'));
    const waiting = quota.acquire(5);
    quota.close();
    await expect(waiting).rejects.toMatchObject({ code: 'QUOTA_GATE_CLOSED' });
  });
});

describe('QuotaGate with a window smaller than a bulk', () => {
  /** A quota window as the sandbox keeps one: `max` per window, refused whole when it does not fit. */
  function window(max: number, tells: boolean) {
    let used = 0;
    const granted: number[] = [];
    const quota = new QuotaGate(
      {
        consume: async (amount) => {
          if (used + amount > max) return 'OVER_LIMIT';
          used += amount;
          granted.push(amount);
          return 'OK';
        },
        ...(tells ? { room: async () => ({ max, left: max - used }) } : {}),
      },
      // Each backoff is a window reset.
      { initialDelayMs: 100, maxDelayMs: 1000, random: () => 1, sleep: async () => void (used = 0) },
      { onExhausted: () => {}, onRestored: () => {}, onConsumed: () => {} },
    );
    return { quota, granted };
  }

  it('regression: a quota window smaller than batching.maxTasks no longer stalls forever: the grant fits the window', async () => {
    const { quota, granted } = window(400, true);
    expect(await quota.acquire(500)).toBe(400);
    expect(await quota.acquire(500)).toBe(400);
    expect(granted).toEqual([400, 400]);
  });

  it('grants what is left of a window instead of waiting for all of it', async () => {
    const { quota, granted } = window(400, true);
    expect(await quota.acquire(300)).toBe(300);
    expect(await quota.acquire(300)).toBe(100);
    expect(granted).toEqual([300, 100]);
  });

  it('halves its requests where the service does not tell the window, so a bulk larger than it still goes out', async () => {
    const { quota, granted } = window(400, false);
    for (let i = 0; i < 3; i += 1) {
      const amount = await quota.acquire(500);
      expect(amount).toBeGreaterThan(0);
      expect(amount).toBeLessThanOrEqual(400);
    }
    expect(granted).toHaveLength(3);
  });
});

describe('QuotaGate pacing its checks to the window', () => {
  /**
   * A window of `max` per `windowMs` on a clock the test moves: the window is exhausted until
   * `resetAt`, empty after it. Each sleep ends when the clock passes it.
   */
  function pacedWindow({ max, windowMs, resetAt }: { max: number; windowMs: number; resetAt: number }) {
    let now = 0;
    let used = max;
    const timers: { at: number; wake: () => void }[] = [];
    const asked: { amount: number; at: number }[] = [];
    const granted: { amount: number; at: number }[] = [];
    const sleeps: number[] = [];
    const quota = new QuotaGate(
      {
        consume: async (amount) => {
          asked.push({ amount, at: now });
          if (used + amount > max) return 'OVER_LIMIT';
          used += amount;
          granted.push({ amount, at: now });
          return 'OK';
        },
        room: async () => ({ max, left: max - used, windowMs }),
      },
      {
        initialDelayMs: 500,
        maxDelayMs: 30_000,
        random: () => 1,
        sleep: (ms) => {
          sleeps.push(ms);
          return new Promise<void>((wake) => timers.push({ at: now + ms, wake }));
        },
      },
      { onExhausted: () => {}, onRestored: () => {}, onConsumed: () => {} },
    );
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    async function advanceTo(end: number) {
      await settle();
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        const next = timers[0];
        if (!next || next.at > end) break;
        timers.shift();
        now = next.at;
        if (now >= resetAt) used = 0;
        next.wake();
        await settle();
      }
      now = end;
    }
    return { quota, asked, granted, sleeps, advanceTo };
  }

  it('regression: waits at most an eighth of a window the service tells (a backoff grown past the window asked first late in one, leaving most of it unused)', async () => {
    const { quota, granted, sleeps, advanceTo } = pacedWindow({ max: 400, windowMs: 4_000, resetAt: 60_000 });
    const waiting = quota.acquire(300);
    await advanceTo(61_000);
    expect(Math.max(...sleeps)).toBeLessThanOrEqual(500);
    expect(granted).toHaveLength(1);
    expect(granted[0]?.at).toBeLessThanOrEqual(60_500);
    expect(await waiting).toBe(300);
  });

  it('while the window is exhausted, one caller asks again; the others ask the moment it is granted', async () => {
    const { quota, asked, granted, advanceTo } = pacedWindow({ max: 400, windowMs: 4_000, resetAt: 4_000 });
    const waiting = Promise.all([quota.acquire(100), quota.acquire(150), quota.acquire(200)]);
    await advanceTo(3_999);
    const askedAgain = new Set(asked.slice(3).map(({ amount }) => amount));
    expect(askedAgain.size).toBe(1);
    await advanceTo(5_000);
    expect(await waiting).toEqual([100, 150, 150]);
    // All of the window that reset is used, as soon as it reset.
    expect(granted.reduce((sum, { amount }) => sum + amount, 0)).toBe(400);
    expect(Math.max(...granted.map(({ at }) => at))).toBeLessThanOrEqual(4_500);
  });
});

describe("QuotaGate drawing what was paid ahead, against the sandbox's quota", () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(() => sandbox.close());

  /** A gate over the sandbox's usage API, for a service allowed `max` units a minute. */
  async function paidAhead(max: number, sleep: () => void = () => {}) {
    await sandbox.raw('POST', '/admin/reset');
    await sandbox.client.upsertRateLimitQuotas({
      body: { quotas: [{ service: { technicalKey: 'GATED' }, maxAmount: max, reset: 'PT1M' }] },
    });
    const check = usageQuotaCheck(sandbox.client, {
      serviceTechnicalKey: 'GATED',
      organizationId: 'default-org',
    });
    const quota = new QuotaGate(
      check,
      { initialDelayMs: 1, maxDelayMs: 1, sleep: async () => sleep() },
      { onExhausted: () => {}, onRestored: () => {}, onConsumed: () => {} },
    );
    const used = async () => {
      const room = await check.room();
      return room && room.max - room.left;
    };
    return { quota, used };
  }

  it('regression: credit drawn by a caller whose consume for the rest failed was lost, and its retry paid all of it again', async () => {
    const { quota, used } = await paidAhead(1_000);
    expect(await quota.prepay(30)).toBe(30);
    // A 503 the service answers without processing the consume.
    await sandbox.raw('PUT', '/admin/faults', { body: { errorRate: 1 } });
    await expect(quota.acquire(100)).rejects.toMatchObject({ code: 'REFDATA_SERVER_ERROR', status: 503 });
    await sandbox.raw('PUT', '/admin/faults', { body: { errorRate: 0 } });
    expect(quota.credit).toBe(30);
    expect(await quota.acquire(100)).toBe(100);
    expect(quota.credit).toBe(0);
    expect(await used()).toBe(100);
  });

  it('regression: credit drawn beyond what a caller finally needed (work revoked while it waited) was lost', async () => {
    let needed = 100;
    // The window is used up; while the caller waits for it, most of its work is revoked.
    const { quota, used } = await paidAhead(30, () => void (needed = 20));
    expect(await quota.prepay(30)).toBe(30);
    expect(await quota.acquire(() => needed)).toBe(20);
    expect(quota.credit).toBe(10);
    expect(await quota.acquire(10)).toBe(10);
    expect(await used()).toBe(30);
  });
});

describe('QuotaGate left by every caller while the window is exhausted, against the sandbox', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(() => sandbox.close());

  /** A gate over the sandbox's usage API whose window of `max` a minute is used up; `waiting` runs at each backoff. */
  async function exhaustedWindow(max: number, waiting: () => Promise<void> | void) {
    await sandbox.raw('POST', '/admin/reset');
    await sandbox.client.upsertRateLimitQuotas({
      body: { quotas: [{ service: { technicalKey: 'GATED' }, maxAmount: max, reset: 'PT1M' }] },
    });
    const check = usageQuotaCheck(sandbox.client, {
      serviceTechnicalKey: 'GATED',
      organizationId: 'default-org',
    });
    const events: string[] = [];
    const quota = new QuotaGate(
      check,
      { initialDelayMs: 1, maxDelayMs: 1, sleep: async () => waiting() },
      {
        // What the pipeline does with them: pause intake for the quota, resume it.
        onExhausted: () => events.push('exhausted'),
        onRestored: () => events.push('restored'),
        onConsumed: () => {},
      },
    );
    expect(await check.consume(max)).toBe('OK');
    return { quota, events };
  }

  // Intake is paused for the quota from the first OVER_LIMIT until a consume is granted. A
  // caller that left ungranted (its partitions revoked in a rebalance, or its consume failed:
  // a 5xx, a 401 whose records are dead-lettered) left the gate exhausted with no one asking
  // again: the source stayed paused, no record came to ask, and the replica stood still
  // (ready all along) with its lag growing, until restarted.
  it('regression: a waiting caller whose work was revoked left intake paused for the quota with no one to ask again', async () => {
    let needed = 10;
    const { quota, events } = await exhaustedWindow(30, () => void (needed = 0));
    expect(await quota.acquire(() => needed)).toBe(0);
    expect(events).toEqual(['exhausted', 'restored']);
    expect(quota.exhausted).toBe(false);
  });

  it('regression: a waiting caller whose consume failed left intake paused for the quota with no one to ask again', async () => {
    const { quota, events } = await exhaustedWindow(30, () =>
      sandbox.raw('PUT', '/admin/faults', { body: { errorRate: 1 } }).then(() => {}),
    );
    await expect(quota.acquire(10)).rejects.toMatchObject({ code: 'REFDATA_SERVER_ERROR', status: 503 });
    await sandbox.raw('PUT', '/admin/faults', { body: { errorRate: 0 } });
    expect(events).toEqual(['exhausted', 'restored']);
    expect(quota.exhausted).toBe(false);
  });

  it('stays exhausted while another caller still waits for the window', async () => {
    let needed = 10;
    let backoffs = 0;
    const { quota, events } = await exhaustedWindow(30, () => {
      backoffs += 1;
      // The first caller's work goes; the second still needs its 5 after a few backoffs, then the window resets.
      if (backoffs === 1) needed = 0;
      if (backoffs === 4) sandbox.clock.advance(60_000);
    });
    const [first, second] = [quota.acquire(() => needed), quota.acquire(5)];
    expect(await first).toBe(0);
    expect(quota.exhausted).toBe(true);
    expect(await second).toBe(5);
    expect(events).toEqual(['exhausted', 'restored']);
  });
});
