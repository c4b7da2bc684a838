// A rerun's part of the shared quota, against a window kept in memory the way the service
// keeps it (a stand-in for the usage API over HTTP, which test/quota/usage-quota-check.test.ts
// covers): at most its share of each window, only what live work leaves, throttled at once.
import { describe, expect, it } from 'vitest';
import { QuotaGate, type QuotaCheck } from '../../src/quota/quota-gate.ts';
import { RerunQuota } from '../../src/quota/rerun-quota.ts';

/** One service window of `max` units; `reset()` starts the next one. */
function serviceWindow(max: number, windowMs?: number) {
  let used = 0;
  const check: QuotaCheck = {
    consume: async (amount) => {
      if (used + amount > max) return 'OVER_LIMIT';
      used += amount;
      return 'OK';
    },
    room: async () => ({ max, left: max - used, ...(windowMs === undefined ? {} : { windowMs }) }),
  };
  return {
    check,
    get used() {
      return used;
    },
    reset: () => void (used = 0),
  };
}

function setup(max: number, clock?: { windowMs: number; now: () => number }) {
  const window = serviceWindow(max, clock?.windowMs);
  const gate = new QuotaGate(
    window.check,
    { initialDelayMs: 10, maxDelayMs: 10, sleep: async () => {} },
    { onExhausted: () => {}, onRestored: () => {}, onConsumed: () => {} },
  );
  const waits: number[] = [];
  // Each wait of the rerun lets the test move the world on (a new window, live work done).
  let onWait: () => void = () => {};
  const rerun = new RerunQuota(gate, window.check, {
    retryMs: 100,
    ...(clock ? { now: clock.now } : {}),
    sleep: async (ms) => {
      waits.push(ms);
      onWait();
    },
  });
  return { window, gate, rerun, waits, setOnWait: (f: () => void) => (onWait = f) };
}

describe('RerunQuota', () => {
  it('takes at most its share of a window, then waits for the next window', async () => {
    const { window, rerun, waits, setOnWait } = setup(1_000);
    expect(
      await rerun.acquire(
        () => 500,
        () => 0.3,
      ),
    ).toBe(300);
    setOnWait(() => window.reset());
    // Nothing is left of its share in this window: it waits, and the next window gives it 300 again.
    expect(
      await rerun.acquire(
        () => 500,
        () => 0.3,
      ),
    ).toBe(300);
    expect(waits).toEqual([100]);
    expect(window.used).toBe(300);
  });

  it('takes only what the window has left after live work', async () => {
    const { window, gate, rerun } = setup(1_000);
    expect(await gate.acquire(900)).toBe(900);
    expect(
      await rerun.acquire(
        () => 500,
        () => 0.5,
      ),
    ).toBe(100);
    expect(window.used).toBe(1_000);
  });

  it('asks for nothing while a live bulk waits for the quota, exhausted or not', async () => {
    const { window, gate, rerun, setOnWait } = setup(100);
    // A live consume under way (a slow answer): the window has room, the rerun still waits for it.
    const answer = Promise.withResolvers<undefined>();
    const consume = window.check.consume.bind(window.check);
    window.check.consume = async (amount) => {
      await answer.promise;
      return consume(amount);
    };
    const live = gate.acquire(80);
    const order: string[] = [];
    setOnWait(() => answer.resolve(undefined));
    const granted = rerun.acquire(
      () => 50,
      () => 1,
    );
    void live.then(() => order.push('live'));
    void granted.then(() => order.push('rerun'));
    expect(await live).toBe(80);
    expect(await granted).toBe(20);
    expect(order).toEqual(['live', 'rerun']);
  });

  it('leaves room for what live work used in the last window, and a fifth more', async () => {
    const { window, gate, rerun } = setup(1_000);
    expect(await gate.acquire(400)).toBe(400);
    expect(
      await rerun.acquire(
        () => 1_000,
        () => 1,
      ),
    ).toBe(600);
    window.reset();
    expect(await gate.acquire(100)).toBe(100);
    // Live used 400 of the last window: 480 are kept for it, 100 of them used already.
    expect(
      await rerun.acquire(
        () => 1_000,
        () => 1,
      ),
    ).toBe(520);
  });

  /**
   * A 2 s window of 1,000 after one in which live work used 400 (so 480 are expected for it):
   * the new window's start was seen, live used 100 of it and the rerun 10. `at` moves the clock.
   */
  async function windowAfterLiveUsed400() {
    const clock = { at: 0 };
    const { window, gate, rerun } = setup(1_000, { windowMs: 2_000, now: () => clock.at });
    expect(await gate.acquire(400)).toBe(400);
    expect(
      await rerun.acquire(
        () => 600,
        () => 1,
      ),
    ).toBe(600);
    window.reset();
    expect(await gate.acquire(100)).toBe(100);
    clock.at = 10; // the window's start, seen (use dropped)
    expect(
      await rerun.acquire(
        () => 10,
        () => 1,
      ),
    ).toBe(10);
    return { clock, rerun };
  }

  it("lets the reserve for live work shrink in the window's second half, so that the window is used up", async () => {
    const { clock, rerun } = await windowAfterLiveUsed400();
    // A quarter of the window left: of the 480 expected for live, half a window's worth is kept.
    clock.at = 10 + 1_500;
    expect(
      await rerun.acquire(
        () => 1_000,
        () => 1,
      ),
    ).toBe(890 - 240);
  });

  it("keeps nothing for live work in the window's last twentieth: a live record arriving then waits only for the next window", async () => {
    const { clock, rerun } = await windowAfterLiveUsed400();
    // 70 ms of the window left: the 380 still expected for live are not kept from the rerun.
    clock.at = 10 + 1_930;
    expect(
      await rerun.acquire(
        () => 1_000,
        () => 1,
      ),
    ).toBe(890);
  });

  it('asks again every twentieth of a window while it may take nothing, not only every retryMs', async () => {
    let at = 0;
    const { window, rerun, waits, setOnWait } = setup(1_000, { windowMs: 1_000, now: () => at });
    expect(
      await rerun.acquire(
        () => 300,
        () => 0.3,
      ),
    ).toBe(300);
    setOnWait(() => {
      at += 1_000;
      window.reset();
    });
    // Its share of this window is used: it looks again 50 ms later (retryMs is 100 here).
    expect(
      await rerun.acquire(
        () => 300,
        () => 0.3,
      ),
    ).toBe(300);
    expect(waits).toEqual([50]);
  });

  it('follows a new share at its next request (throttled while it runs)', async () => {
    const { window, rerun, setOnWait } = setup(1_000);
    let share = 0.5;
    expect(
      await rerun.acquire(
        () => 1_000,
        () => share,
      ),
    ).toBe(500);
    window.reset();
    share = 0.1;
    setOnWait(() => window.reset());
    expect(
      await rerun.acquire(
        () => 1_000,
        () => share,
      ),
    ).toBe(100);
  });
});
