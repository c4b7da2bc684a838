// Request rate and concurrency limit towards the reference data service, on top of the
// quota gate. It adapts to 429s, multiplicatively both ways (AIMD's decrease, with a
// multiplicative recovery so the configured rate is back within seconds):
// - A 429 is a congestion signal: new requests are held back for its Retry-After (the
//   server's word on when to come back), then released together, spaced at a rate
//   multiplied by DECREASE_FACTOR, never below FLOOR_SHARE of the configured rate. A
//   floor, because under a steady share of 429s each decrease would otherwise compound
//   down to a trickle that wastes most of what the service still accepts.
// - One signal per episode, not one per answer (as TCP decreases once per window): the
//   429s for attempts already in flight when the first one came back, or sent in the
//   round after the hold (one Retry-After long), are part of the same episode. Their own
//   retries still wait their Retry-After in the client; what they do not do is hold
//   everything again. Without that round, the 429s answering the requests released by
//   the hold would start the next hold at once and the limiter would send about one
//   request per Retry-After.
// - From the end of the hold, the rate grows by GROWTH_PER_SECOND per second back to the
//   configured rate.
// Which attempt a 429 answers is known without the client's help: throttled() is called
// from the client's retry event, synchronously inside the request that run() started.
import { AsyncLocalStorage } from 'node:async_hooks';
import pLimit from 'p-limit';

export interface RequestLimiterOptions {
  requestsPerSecond: number;
  concurrency: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const DECREASE_FACTOR = 0.7;
const FLOOR_SHARE = 0.25;
const GROWTH_PER_SECOND = 2;

/** The attempt a request is on, for telling an old 429 from a new one. */
interface Attempt {
  sentAt: number;
}

export class RequestLimiter {
  readonly #configured: number;
  readonly #slots: ReturnType<typeof pLimit>;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #attempts = new AsyncLocalStorage<Attempt>();
  /** The rate set by the last signal; it applies until the hold ends and grows from there. */
  #reducedRate: number;
  #heldUntil = 0;
  /** A 429 for an attempt sent before this belongs to the current episode. */
  #episodeSentBefore = -Infinity;
  #episodes = 0;
  #nextSendAt = 0;

  constructor(options: RequestLimiterOptions) {
    this.#configured = options.requestsPerSecond;
    this.#reducedRate = options.requestsPerSecond;
    this.#slots = pLimit(options.concurrency);
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** Requests per second currently allowed. */
  get rate(): number {
    return this.#rateAt(this.#now());
  }

  run<T>(request: () => Promise<T>): Promise<T> {
    return this.#slots(async () => {
      await this.#waitForTurn();
      return this.#attempts.run({ sentAt: this.#now() }, request);
    });
  }

  /**
   * The service answered 429 and the client will repeat the request after `retryAfterMs`.
   * Called outside run(), the 429 counts as answering an attempt sent just now.
   */
  throttled(retryAfterMs = 0): void {
    const now = this.#now();
    const attempt = this.#attempts.getStore();
    const sentAt = attempt?.sentAt ?? now;
    if (attempt) attempt.sentAt = now + retryAfterMs;
    if (sentAt < this.#episodeSentBefore) return;
    this.#reducedRate = Math.max(this.#configured * FLOOR_SHARE, this.#rateAt(now) * DECREASE_FACTOR);
    this.#heldUntil = Math.max(this.#heldUntil, now + retryAfterMs);
    this.#episodeSentBefore = this.#heldUntil + retryAfterMs;
    this.#nextSendAt = this.#heldUntil;
    this.#episodes += 1;
  }

  #rateAt(time: number): number {
    if (time <= this.#heldUntil) return this.#reducedRate;
    const grown = this.#reducedRate * GROWTH_PER_SECOND ** ((time - this.#heldUntil) / 1000);
    return Math.min(this.#configured, grown);
  }

  async #waitForTurn(): Promise<void> {
    for (;;) {
      const now = this.#now();
      // Reserve the next send slot before waiting, so concurrent callers queue up behind each other.
      const sendAt = Math.max(now, this.#nextSendAt, this.#heldUntil);
      this.#nextSendAt = sendAt + 1000 / this.#rateAt(sendAt);
      if (sendAt <= now) return;
      const episodes = this.#episodes;
      await this.#sleep(sendAt - now);
      // A 429 that came back meanwhile voided the reservation: queue again behind its hold.
      if (this.#episodes === episodes) return;
    }
  }
}
