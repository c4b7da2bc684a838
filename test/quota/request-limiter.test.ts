import { describe, expect, it } from 'vitest';
import { RequestLimiter } from '../../src/quota/request-limiter.ts';
import { Random } from '../../src/sandbox/dataset/random.ts';

/** A limiter whose sleep moves the clock at once: enough while only one caller waits at a time. */
function limiter(requestsPerSecond: number, concurrency = 10) {
  let clock = 0;
  const waits: number[] = [];
  const limit = new RequestLimiter({
    requestsPerSecond,
    concurrency,
    now: () => clock,
    sleep: async (ms) => {
      waits.push(ms);
      clock += ms;
    },
  });
  return { limit, waits, advance: (ms: number) => (clock += ms) };
}

/**
 * Simulated time for many callers at once: sleeps are timers that fire in time order, each
 * after everything the previous one set going has run.
 */
function virtualTime() {
  let clock = 0;
  let order = 0;
  const timers: { at: number; order: number; fire: () => void }[] = [];
  return {
    now: () => clock,
    sleep: (ms: number) =>
      new Promise<void>((fire) => {
        timers.push({ at: clock + ms, order: order++, fire });
      }),
    async runUntil(end: number): Promise<void> {
      for (;;) {
        await new Promise((resolve) => setImmediate(resolve));
        timers.sort((a, b) => a.at - b.at || a.order - b.order);
        const next = timers[0];
        if (!next || next.at > end) break;
        timers.shift();
        clock = next.at;
        next.fire();
      }
      clock = end;
    },
  };
}

/**
 * Successful requests per simulated second over `seconds`, with callers always waiting (more
 * than the limiter lets through). Each request behaves as the reference data client does: an
 * answer takes 5 ms; a 429 (drawn with `throttleShare`) tells the limiter (as the client's
 * retry event does) and is repeated after its Retry-After of 1 s, at most 4 attempts.
 */
async function successesPerSecond(options: {
  requestsPerSecond: number;
  concurrency: number;
  throttleShare: number;
  seconds: number;
}): Promise<number[]> {
  const time = virtualTime();
  const limit = new RequestLimiter({ ...options, now: time.now, sleep: time.sleep });
  const random = new Random(42);
  const perSecond = Array.from({ length: options.seconds }, () => 0);
  const request = async () => {
    for (let attempt = 1; attempt <= 4; attempt++) {
      await time.sleep(5);
      if (random.next() >= options.throttleShare) {
        const second = Math.floor(time.now() / 1000);
        perSecond[second] = (perSecond[second] ?? 0) + 1;
        return;
      }
      limit.throttled(1000);
      await time.sleep(1000);
    }
  };
  let running = true;
  const caller = async () => {
    while (running) await limit.run(request);
  };
  for (let i = 0; i < 3 * options.concurrency; i++) void caller();
  await time.runUntil(options.seconds * 1000 - 1);
  running = false;
  return perSecond;
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

describe('RequestLimiter', () => {
  it('spaces requests to the configured rate', async () => {
    const { limit, waits } = limiter(4);
    await Promise.all([1, 2, 3].map(() => limit.run(async () => 'ok')));
    expect(waits).toEqual([250, 250]);
  });

  it('holds requests back for the Retry-After of a 429 and lowers the rate by 30 %', async () => {
    const { limit, waits } = limiter(10);
    await limit.run(async () => 'first');
    limit.throttled(2000);
    expect(limit.rate).toBe(7);
    await limit.run(async () => 'after');
    expect(waits).toEqual([2000]);
  });

  it('regression: 429s for requests already in flight when the first came back count as one congestion signal', async () => {
    const { limit } = limiter(1000);
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const inFlight = [1, 2, 3, 4].map(() =>
      limit.run(async () => {
        await answered;
        limit.throttled(1000);
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    answer();
    await Promise.all(inFlight);
    expect(limit.rate).toBe(700);
  });

  it('regression: after a burst of 429s the configured rate is back within seconds, having never dropped below a quarter of it', async () => {
    const { limit, advance } = limiter(20);
    for (let signal = 0; signal < 10; signal++) {
      if (signal > 0) advance(1);
      limit.throttled(0);
    }
    expect(limit.rate).toBe(5);
    advance(1000);
    expect(limit.rate).toBe(10);
    advance(1000);
    expect(limit.rate).toBe(20);
  });

  it('regression: requests waiting out a Retry-After are released together when it ends, spaced at the lowered rate, not one per second', async () => {
    const time = virtualTime();
    const limit = new RequestLimiter({
      requestsPerSecond: 10,
      concurrency: 10,
      now: time.now,
      sleep: time.sleep,
    });
    for (let answer = 0; answer < 6; answer++) limit.throttled(1000);
    const sentAt: number[] = [];
    for (let request = 0; request < 4; request++) void limit.run(async () => sentAt.push(time.now()));
    await time.runUntil(2000);
    expect(sentAt).toHaveLength(4);
    expect(sentAt[0]).toBe(1000);
    // The rate grows back while they go out, so the gaps shrink from 1000/7 ms towards 1000/10.
    for (const gap of sentAt.slice(1).map((at, i) => at - (sentAt[i] ?? 0))) {
      expect(gap).toBeLessThanOrEqual(1000 / 7 + 0.001);
      expect(gap).toBeGreaterThanOrEqual(1000 / 10);
    }
  });

  it('holds back a request that was already waiting for its turn when a 429 came back', async () => {
    const time = virtualTime();
    const limit = new RequestLimiter({
      requestsPerSecond: 10,
      concurrency: 10,
      now: time.now,
      sleep: time.sleep,
    });
    const sentAt: number[] = [];
    const send = () => limit.run(async () => sentAt.push(time.now()));
    void send();
    const waiting = send();
    await time.runUntil(50);
    limit.throttled(1000);
    await time.runUntil(2000);
    await waiting;
    expect(sentAt).toEqual([0, 1050]);
  });

  it('takes a 429 for an attempt sent after the round that follows the hold as a new signal', async () => {
    const time = virtualTime();
    const limit = new RequestLimiter({
      requestsPerSecond: 10,
      concurrency: 10,
      now: time.now,
      sleep: time.sleep,
    });
    const answer429 = () =>
      limit.run(async () => {
        await time.sleep(5);
        limit.throttled(1000);
      });
    void answer429();
    await time.runUntil(100);
    expect(limit.rate).toBe(7);
    // Sent during the round after the hold: the same episode.
    void answer429();
    await time.runUntil(1500);
    expect(limit.rate).toBeGreaterThan(7);
    await time.runUntil(2100);
    void answer429();
    await time.runUntil(2200);
    expect(limit.rate).toBe(7);
  });

  it('regression: under 50% 429s with Retry-After the limiter does not collapse to 1 request/s', async () => {
    const requestsPerSecond = 20;
    const run = (throttleShare: number) =>
      successesPerSecond({ requestsPerSecond, concurrency: 8, throttleShare, seconds: 60 });
    expect(mean(await run(0))).toBe(requestsPerSecond);
    // Half of what is sent at the configured rate succeeds; the other half is told to come back in a second.
    const allowed = requestsPerSecond * 0.5;
    expect(mean(await run(0.5)) / allowed).toBeGreaterThanOrEqual(0.5);
  });

  it('never runs more than `concurrency` requests at once', async () => {
    const { limit } = limiter(1000, 2);
    let running = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 6 }, () =>
        limit.run(async () => {
          running += 1;
          peak = Math.max(peak, running);
          await new Promise((resolve) => setImmediate(resolve));
          running -= 1;
        }),
      ),
    );
    expect(peak).toBe(2);
  });
});
