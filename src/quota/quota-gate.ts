// The quota consume check is the pipeline's rate limiter feed: before a bulk is
// submitted, its task count is consumed from the organization's quota. OVER_LIMIT
// pauses intake (the source stops fetching; nothing is buffered or dropped) and the
// check is retried with backoff until the quota window resets. Callers are served one
// at a time, in order, so that a waiting bulk is not overtaken by later ones.
import { backoffDelay, type BackoffOptions } from '../retry/backoff.ts';
import { QuotaError } from './errors.ts';

export type QuotaStatus = 'OK' | 'OVER_LIMIT';

export interface QuotaCheck {
  consume(amount: number): Promise<QuotaStatus>;
}

export interface QuotaGateEvents {
  /** The quota ran out; intake should pause. */
  onExhausted(): void;
  /** The quota is back after an exhaustion; intake may resume. */
  onRestored(): void;
  /** Units consumed successfully. */
  onConsumed(amount: number): void;
}

export interface QuotaGateOptions extends BackoffOptions {
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class QuotaGate {
  readonly #check: QuotaCheck;
  readonly #options: QuotaGateOptions;
  readonly #events: QuotaGateEvents;
  #queue: Promise<void> = Promise.resolve();
  #exhausted = false;
  #closed = false;

  constructor(check: QuotaCheck, options: QuotaGateOptions, events: QuotaGateEvents) {
    this.#check = check;
    this.#options = options;
    this.#events = events;
  }

  get exhausted(): boolean {
    return this.#exhausted;
  }

  /**
   * Resolves with the units consumed once they were; rejects only when the check itself fails
   * or the gate closes. A function amount is asked again before every attempt (what still needs
   * quota can shrink while the gate waits, e.g. when partitions are revoked); 0 consumes nothing.
   */
  acquire(amount: number | (() => number)): Promise<number> {
    const turn = this.#queue.then(() => this.#consume(typeof amount === 'number' ? () => amount : amount));
    this.#queue = turn.then(
      () => {},
      () => {},
    );
    return turn;
  }

  /** Stops waiting callers at their next retry (shutdown). */
  close(): void {
    this.#closed = true;
  }

  async #consume(needed: () => number): Promise<number> {
    const sleep = this.#options.sleep ?? defaultSleep;
    for (let attempt = 1; ; attempt += 1) {
      if (this.#closed) throw new QuotaError('QUOTA_GATE_CLOSED', 'stopped while waiting for quota');
      const amount = needed();
      if (amount === 0) return 0;
      const status = await this.#check.consume(amount);
      if (status === 'OK') {
        if (this.#exhausted) {
          this.#exhausted = false;
          this.#events.onRestored();
        }
        this.#events.onConsumed(amount);
        return amount;
      }
      if (!this.#exhausted) {
        this.#exhausted = true;
        this.#events.onExhausted();
      }
      await sleep(backoffDelay(attempt, this.#options, this.#options.random));
    }
  }
}
