// Request rate and concurrency limit towards the reference data service, on top of the
// quota gate. It adapts: a 429 halves the rate and holds new requests back for the
// Retry-After delay; each second without one adds one request per second back, up to
// the configured rate (additive increase, multiplicative decrease).
import pLimit from 'p-limit';

export interface RequestLimiterOptions {
  requestsPerSecond: number;
  concurrency: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const MIN_RATE = 1;

export class RequestLimiter {
  readonly #options: RequestLimiterOptions;
  readonly #slots: ReturnType<typeof pLimit>;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  #rate: number;
  #nextSendAt = 0;
  #heldUntil = 0;
  #lastIncrease = 0;

  constructor(options: RequestLimiterOptions) {
    this.#options = options;
    this.#slots = pLimit(options.concurrency);
    this.#rate = options.requestsPerSecond;
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** Requests per second currently allowed. */
  get rate(): number {
    return this.#rate;
  }

  run<T>(request: () => Promise<T>): Promise<T> {
    return this.#slots(async () => {
      await this.#waitForTurn();
      return request();
    });
  }

  /** The service answered 429: slow down, and wait at least `retryAfterMs` before the next request. */
  throttled(retryAfterMs = 0): void {
    this.#rate = Math.max(MIN_RATE, this.#rate / 2);
    this.#heldUntil = Math.max(this.#heldUntil, this.#now() + retryAfterMs);
    this.#lastIncrease = this.#now();
  }

  async #waitForTurn(): Promise<void> {
    const now = this.#now();
    if (now - this.#lastIncrease >= 1000 && this.#rate < this.#options.requestsPerSecond) {
      this.#rate = Math.min(this.#options.requestsPerSecond, this.#rate + 1);
      this.#lastIncrease = now;
    }
    // Reserve the next send slot before waiting, so concurrent callers queue up behind each other.
    const sendAt = Math.max(now, this.#nextSendAt, this.#heldUntil);
    this.#nextSendAt = sendAt + 1000 / this.#rate;
    if (sendAt > now) await this.#sleep(sendAt - now);
  }
}
