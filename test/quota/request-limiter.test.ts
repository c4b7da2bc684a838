import { describe, expect, it } from 'vitest';
import { RequestLimiter } from '../../src/quota/request-limiter.ts';

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

describe('RequestLimiter', () => {
  it('spaces requests to the configured rate', async () => {
    const { limit, waits } = limiter(4);
    await Promise.all([1, 2, 3].map(() => limit.run(async () => 'ok')));
    expect(waits).toEqual([250, 250]);
  });

  it('halves the rate and honours Retry-After on a 429', async () => {
    const { limit, waits } = limiter(10);
    await limit.run(async () => 'first');
    limit.throttled(2000);
    expect(limit.rate).toBe(5);
    await limit.run(async () => 'after');
    expect(waits).toEqual([2000]);
  });

  it('adds one request per second back for every quiet second', async () => {
    const { limit, advance } = limiter(10);
    limit.throttled();
    limit.throttled();
    expect(limit.rate).toBe(2.5);
    advance(1000);
    await limit.run(async () => 'x');
    expect(limit.rate).toBe(3.5);
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
