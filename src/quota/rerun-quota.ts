// A rerun's part of the shared quota: live records first. A rerun consumes only while no
// live bulk waits for the quota, never what live work is still expected to need in the
// window (as much as it used in the last window, and a fifth more; in the second half of a
// window whose start was seen, that expectation shrinks with the time left, and in the
// window's last twentieth nothing is kept: a live record arriving then waits only for the
// next window, which is about to begin), and at most its share of each window; the share is
// read at every request, so a running rerun can be throttled. While it may take nothing, it
// asks again every twentieth of a window (at most `retryMs` apart): asked only every
// `retryMs` (500 ms by default, a quarter of a 2 s window), the rest of a window went unused
// (benchmark rerun: windows 97.3 % used, 54 of 124 at >= 98 %).
// Taking whatever was left the moment the rerun asked (early in a window) left live
// records arriving later in the window without quota until the next one (measured: live p95
// 5.1x, most live records delayed past a window, with live at half of the window).
//
// The window is the service's (usage API: its size, what is used, how long it lasts): the
// rerun's count starts again when the service's use drops (the window reset) or when a
// window's length has passed since the count began. Without a usage API the share cannot
// be measured and the rerun consumes through the gate like live work, after it.
import { pipelineEvents } from '../observability/events.ts';
import type { QuotaCheck, QuotaGate, QuotaRoom } from './quota-gate.ts';

export interface RerunQuotaOptions {
  /** How long to wait before asking again when the rerun may take nothing now. */
  retryMs: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/** Live use may grow this much from one window to the next before the rerun is in its way. */
const LIVE_MARGIN = 1.2;

/** The part of a window that is its tail (nothing kept for live work) and the rerun's cadence. */
const TAIL = 1 / 20;

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export class RerunQuota {
  readonly #gate: QuotaGate;
  readonly #check: QuotaCheck;
  readonly #options: RerunQuotaOptions;
  /** Rerun requests go one at a time: each sees what the one before took. */
  #turn: Promise<unknown> = Promise.resolve();
  #used = 0;
  #countSince = 0;
  #serviceUsed = -1;
  /** What others (live work) used of the last window seen whole; unknown before one was. */
  #othersLast: number | undefined;
  /** Whether the current count began at a window's start seen (use dropped), not at a guess. */
  #startSeen = false;
  #closed = false;

  constructor(gate: QuotaGate, check: QuotaCheck, options: RerunQuotaOptions) {
    this.#gate = gate;
    this.#check = check;
    this.#options = options;
  }

  /** Units the reruns took in the current window. */
  get used(): number {
    return this.#used;
  }

  close(): void {
    this.#closed = true;
  }

  /**
   * Resolves with the units consumed for a rerun's bulk (at most `needed()`), once live work
   * leaves room for them; 0 when nothing is needed any more.
   */
  acquire(needed: () => number, share: () => number): Promise<number> {
    const turn = this.#turn.then(() => this.#acquire(needed, share));
    this.#turn = turn.catch(() => {});
    return turn;
  }

  async #acquire(needed: () => number, share: () => number): Promise<number> {
    const sleep = this.#options.sleep ?? defaultSleep;
    const now = this.#options.now ?? Date.now;
    for (;;) {
      if (this.#closed) return 0;
      const wanted = needed();
      if (wanted === 0) return 0;
      if (this.#gate.exhausted || this.#gate.pending > 0) {
        await sleep(this.#options.retryMs);
        continue;
      }
      const room = await this.#check.room?.().catch(() => undefined);
      if (!room) return this.#consumed(await this.#gate.acquire(needed));
      const at = now();
      this.#track(room, at);
      const shareOfWindow = Math.floor(share() * room.max);
      // Before a whole window was seen, everything the rerun's share does not claim is live's.
      const expected =
        this.#othersLast === undefined ? room.max - shareOfWindow : Math.ceil(this.#othersLast * LIVE_MARGIN);
      const timeLeft = this.#timeLeft(room, at);
      const reserve =
        timeLeft <= TAIL
          ? 0
          : Math.min(
              Math.max(0, expected - (room.max - room.left - this.#used)),
              Math.ceil(expected * Math.min(1, 2 * timeLeft)),
            );
      const allowed = Math.min(wanted, room.left - reserve, shareOfWindow - this.#used);
      if (allowed <= 0) {
        await sleep(this.#cadence(room));
        continue;
      }
      const granted = await this.#gate.acquire(() => Math.min(allowed, needed()));
      this.#used += granted;
      this.#serviceUsed += granted;
      return this.#consumed(granted);
    }
  }

  #consumed(tasks: number): number {
    if (tasks > 0) pipelineEvents.rerun.publish({ type: 'quota', tasks });
    return tasks;
  }

  /** How long to wait before asking again: a twentieth of the window where it is told. */
  #cadence(room: QuotaRoom): number {
    const { retryMs } = this.#options;
    return room.windowMs === undefined
      ? retryMs
      : Math.min(retryMs, Math.max(10, Math.round(room.windowMs * TAIL)));
  }

  /** The part of the window still ahead, where its start was seen and its length told; else 1. */
  #timeLeft(room: QuotaRoom, at: number): number {
    if (!this.#startSeen || room.windowMs === undefined) return 1;
    return Math.max(0, 1 - (at - this.#countSince) / room.windowMs);
  }

  /** Starts the count again when a new window began. */
  #track(room: QuotaRoom, at: number): void {
    const serviceUsed = room.max - room.left;
    const dropped = serviceUsed < this.#serviceUsed;
    const elapsed = room.windowMs !== undefined && at - this.#countSince >= room.windowMs;
    if (dropped || elapsed || this.#serviceUsed < 0) {
      // Counted from a start seen, a window's length later is the next start; a guess stays one.
      this.#startSeen = dropped || (elapsed && this.#startSeen);
      if (this.#serviceUsed >= 0) this.#othersLast = Math.max(0, this.#serviceUsed - this.#used);
      this.#used = 0;
      this.#countSince =
        !dropped && this.#startSeen && room.windowMs !== undefined
          ? this.#countSince + Math.floor((at - this.#countSince) / room.windowMs) * room.windowMs
          : at;
    }
    this.#serviceUsed = serviceUsed;
  }
}
