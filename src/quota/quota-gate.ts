// The quota consume check is the pipeline's rate limiter feed: before a bulk is
// submitted, its task count is consumed from the organization's quota. OVER_LIMIT
// pauses intake (the source stops fetching; nothing is buffered or dropped) and the
// check is retried with backoff until the quota window resets (or until no caller waits any
// more: the last one left without a grant, and intake resumes for the next to ask). While the window is
// exhausted, callers are served one at a time, in order, so that a waiting bulk is not
// overtaken by later ones; while it has room, consumes run side by side: served one at a
// time, a single slow consume (a 429 waiting out its Retry-After) held every bulk back
// (measured: 0.45 of what Retry-After allows under 50 % 429s).
//
// A bulk may need more than a whole window allows, or more than is left of it: after an
// OVER_LIMIT the gate asks the service how large the window is and how much is left
// (usage API) and grants what fits, so the caller cuts its bulk to that; a service that
// does not tell gets halved requests, which grow back as they are granted.
//
// While the window is exhausted one caller asks again (the others wait for a grant), and where the service tells the window's length, no wait is longer than an eighth of it: a
// backoff grown past the window (30 s against a 4 s window) asked first late in a window, and
// those waiting side by side could not fill the rest of it before it ended (measured: one
// window of 400 used 100 in the chaos suite).
import { backoffDelay, type BackoffOptions } from '../retry/backoff.ts';
import { QuotaError } from './errors.ts';
import { traceEvent, traced } from '../observability/tracing.ts';

export type QuotaStatus = 'OK' | 'OVER_LIMIT';

/** The quota window as the service reports it: how much it allows, how much is left now. */
export interface QuotaRoom {
  max: number;
  left: number;
  /** How long a window lasts, where the service tells. */
  windowMs?: number;
}

export interface QuotaCheck {
  consume(amount: number): Promise<QuotaStatus>;
  /** The window's size and what is left of it, where the service tells; undefined where not. */
  room?(): Promise<QuotaRoom | undefined>;
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
  now?: () => number;
}

/** How far back consumes are remembered (consumedWithin()): longer than any window in use. */
const HISTORY_MS = 60_000;

const HALVE_AFTER_ATTEMPTS = 7;
/** Longest wait for a window to reset, as a part of the window: the most of it left unused. */
const WINDOW_PARTS_PER_WAIT = 8;

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class QuotaGate {
  readonly #check: QuotaCheck;
  readonly #options: QuotaGateOptions;
  readonly #events: QuotaGateEvents;
  #queue: Promise<void> = Promise.resolve();
  /** Callers waiting in the queue: while any do, newcomers line up behind them. */
  #queued = 0;
  #pending = 0;
  /** Callers from their entry until their consume ended, counted at once (#pending lags by a turn). */
  #asking = 0;
  /** Resolved at each grant: wakes callers backing off side by side. */
  #grant = Promise.withResolvers<undefined>();
  #exhausted = false;
  #closed = false;
  /** Largest amount worth asking for: the window's size where known, else what was last granted after halving. */
  #cap = Number.POSITIVE_INFINITY;
  #capGuessed = false;
  #windowMs: number | undefined;
  /** The caller asking again while the window is exhausted; the others wait for its grant. */
  #prober: object | undefined;
  /** Units consumed ahead for callers still to come (prepay()): drawn before anything is consumed. */
  #credit = 0;
  /** Consumes granted in the last HISTORY_MS, oldest first, and since when they are remembered. */
  readonly #history: { at: number; amount: number }[] = [];
  #since: number | undefined;

  constructor(check: QuotaCheck, options: QuotaGateOptions, events: QuotaGateEvents) {
    this.#check = check;
    this.#options = options;
    this.#events = events;
  }

  get exhausted(): boolean {
    return this.#exhausted;
  }

  /** Callers waiting for a grant now: while any do, a rerun asks for nothing (live first). */
  get pending(): number {
    return this.#pending;
  }

  /**
   * Units consumed through the gate in the last `ms`; undefined while the gate has not been in
   * use that long (what it saw says nothing about a whole window then).
   */
  consumedWithin(ms: number): number | undefined {
    const now = (this.#options.now ?? Date.now)();
    if (this.#since === undefined || now - this.#since < ms || ms > HISTORY_MS) return undefined;
    let sum = 0;
    for (const { at, amount } of this.#history) if (at > now - ms) sum += amount;
    return sum;
  }

  /** Units paid ahead and not drawn yet. */
  get credit(): number {
    return this.#credit;
  }

  /**
   * Resolves with the units consumed once they were (or drawn from what was paid ahead);
   * rejects only when the check itself fails or the gate closes. A function amount is asked
   * again before every attempt (what still needs quota can shrink while the gate waits, e.g.
   * when partitions are revoked); 0 consumes nothing. `fromCredit: false` leaves what was paid
   * ahead to others (a rerun does not draw what was paid for live work). What was drawn goes
   * back to the credit when the call rejects, and in the part the caller no longer needs when
   * it resolves: the service counted those units already, and dropped, they were paid again
   * (a 503 on the consume for the rest: 130 units for 100 tasks).
   */
  acquire(amount: number | (() => number), { fromCredit = true } = {}): Promise<number> {
    const needed = typeof amount === 'number' ? () => amount : amount;
    const drawn = fromCredit ? Math.min(this.#credit, needed()) : 0;
    this.#credit -= drawn;
    const rest = () => Math.max(0, needed() - drawn);
    if (drawn > 0 && rest() === 0) return Promise.resolve(drawn);
    this.#pending += 1;
    const turn = traced(
      'quota check',
      {},
      () => this.#enter(rest),
      (granted) => ({ 'partner_enrich.quota.granted': granted }),
    );
    void turn.then(
      () => (this.#pending -= 1),
      () => (this.#pending -= 1),
    );
    if (drawn === 0) return turn;
    return turn.then(
      (granted) => {
        const kept = Math.min(drawn, Math.max(0, needed() - granted));
        this.#credit += drawn - kept;
        return granted + kept;
      },
      (error: unknown) => {
        this.#credit += drawn;
        throw error;
      },
    );
  }

  /**
   * Consumes `units` now for callers still to come: the next acquire() calls draw them before
   * consuming anything. Resolves with what was consumed (0 when the window has no room).
   */
  async prepay(units: number): Promise<number> {
    const granted = await this.acquire(units, { fromCredit: false });
    this.#credit += granted;
    return granted;
  }

  #enter(needed: () => number): Promise<number> {
    // Counted until its consume ends (#consume), queued or not: someone who will still ask.
    this.#asking += 1;
    if (!this.#exhausted && this.#queued === 0) {
      const turn = this.#consume(needed);
      // Whoever has to line up later (the window ran out meanwhile) waits for this one too.
      const ended = turn.then(
        () => {},
        () => {},
      );
      this.#queue = Promise.all([this.#queue, ended]).then(() => {});
      return turn;
    }
    this.#queued += 1;
    const turn = this.#queue.then(() => this.#consume(needed));
    this.#queue = turn.then(
      () => {},
      () => {},
    );
    void this.#queue.then(() => (this.#queued -= 1));
    return turn;
  }

  /** Stops waiting callers at their next retry (shutdown). */
  close(): void {
    this.#closed = true;
  }

  async #consume(needed: () => number): Promise<number> {
    const caller = {};
    try {
      return await this.#consumeAs(caller, needed);
    } finally {
      // Whoever waits for this caller's grant asks again itself.
      if (this.#prober === caller) {
        this.#prober = undefined;
        this.#granted();
      }
      // The last caller waiting for an exhausted window left without a grant (its work was
      // revoked, or the check failed): nobody asks again, so intake is let go, and the next
      // work asks itself. Left paused, no record came to ask, and the replica stood still
      // (ready all along) until restarted.
      this.#asking -= 1;
      if (this.#exhausted && this.#asking === 0 && !this.#closed) {
        this.#exhausted = false;
        this.#events.onRestored();
      }
    }
  }

  async #consumeAs(caller: object, needed: () => number): Promise<number> {
    const sleep = this.#options.sleep ?? defaultSleep;
    let fits = Number.POSITIVE_INFINITY;
    let probes = 0;
    for (let attempt = 1; ; attempt += 1) {
      if (this.#closed) throw new QuotaError('QUOTA_GATE_CLOSED', 'stopped while waiting for quota');
      const wanted = needed();
      if (wanted === 0) return 0;
      const amount = Math.min(wanted, fits, this.#cap);
      const status = await this.#check.consume(amount);
      if (status === 'OK') {
        if (this.#exhausted) {
          this.#exhausted = false;
          this.#events.onRestored();
        }
        this.#events.onConsumed(amount);
        this.#remember(amount);
        this.#granted();
        // A halved guess that was granted may be too small: ask for more next time.
        if (this.#capGuessed) this.#cap *= 2;
        return amount;
      }
      traceEvent('quota over limit', { 'partner_enrich.quota.requested': amount });
      if (!this.#exhausted) {
        this.#exhausted = true;
        this.#events.onExhausted();
      }
      const room = await this.#check.room?.().catch(() => undefined);
      if (room) {
        this.#cap = room.max;
        this.#capGuessed = false;
        this.#windowMs = room.windowMs ?? this.#windowMs;
        // Part of the window is left: take that much now instead of waiting for all of it.
        if (room.left > 0 && room.left < amount && room.left !== fits) {
          fits = room.left;
          continue;
        }
        fits = Number.POSITIVE_INFINITY;
      } else if (attempt >= HALVE_AFTER_ATTEMPTS) {
        // No word on the window: a request refused through several window resets (the backoff
        // has grown past them by now) may be larger than all of it.
        this.#cap = Math.max(1, Math.ceil(amount / 2));
        this.#capGuessed = true;
      }
      // Callers consuming side by side: one asks again, paced to the window, the others wait
      // for a grant (its or a newcomer's) and ask again the moment there is one, so that a
      // window that just reset is filled as a queue would. A prober that leaves ungranted
      // (closed, nothing left to pay for, the check failed) wakes them too.
      this.#prober ??= caller;
      if (this.#prober !== caller) {
        await this.#grant.promise;
        continue;
      }
      probes += 1;
      await Promise.race([
        sleep(backoffDelay(probes, this.#probeBackoff(), this.#options.random)),
        this.#grant.promise,
      ]);
    }
  }

  #probeBackoff(): BackoffOptions {
    if (this.#windowMs === undefined) return this.#options;
    const maxDelayMs = Math.max(
      1,
      Math.min(this.#options.maxDelayMs, this.#windowMs / WINDOW_PARTS_PER_WAIT),
    );
    return { initialDelayMs: Math.min(this.#options.initialDelayMs, maxDelayMs), maxDelayMs };
  }

  #remember(amount: number): void {
    const now = (this.#options.now ?? Date.now)();
    this.#since ??= now;
    this.#history.push({ at: now, amount });
    while ((this.#history[0]?.at ?? now) <= now - HISTORY_MS) this.#history.shift();
  }

  #granted(): void {
    this.#grant.resolve(undefined);
    this.#grant = Promise.withResolvers<undefined>();
  }
}
