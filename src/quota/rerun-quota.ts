// A rerun's part of the shared quota: live records first. A rerun consumes only while no
// live bulk waits for the quota, never what live work is still expected to need in the
// window (as much as it used in the last window, and a fifth more; in the second half of a
// window whose start was seen, that expectation shrinks with the time left, and in the
// window's tail (TAIL) nothing is kept: the rerun takes what is left, after paying ahead
// for the live work expected until the window ends, which that live work draws without
// asking the service), and at most its share of each window; the share is
// read at every request, so a running rerun can be throttled. While it may take nothing, it
// asks again every twentieth of a window (at most `retryMs` apart), and when the window's
// tail begins, reckoned from the earliest the window can have started: asked only every
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

/** How often the rerun asks while it may take nothing, as a part of the window. */
const CADENCE = 1 / 20;

/**
 * The window's tail, where nothing is kept for live work: a twentieth of the window, and at
 * least TAIL_MS (but at most a quarter of it). Its asks must land before the window ends: a
 * tail of 100 ms (a twentieth of 2 s) was lost whole to a pause of the process serving the
 * quota, or of this one, at its start (GC: 60-150 ms), and its units went unused (benchmark
 * rerun: one window in about each run at 93-97 %).
 */
const TAIL = 1 / 20;
const TAIL_MS = 250;
const MAX_TAIL = 1 / 4;

/** The part of a window of `windowMs` (where it is told) that is its tail. */
const tailOf = (windowMs: number | undefined) =>
  windowMs === undefined ? TAIL : Math.max(TAIL, Math.min(MAX_TAIL, TAIL_MS / windowMs));

/** The least part of a rerun's bulk it takes before a window's tail (in the tail, anything). */
const MIN_BULK_PART = 1 / 4;

/** How soon a rerun asks again while a live consume is under way (not refused, only in flight). */
const IN_FLIGHT_RECHECK_MS = 5;

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Where `time` falls in a window of `windowMs` that began at `start` (or whole windows later). */
const intoWindow = (time: number, start: number, windowMs: number) =>
  (((time - start) % windowMs) + windowMs) % windowMs;

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
  /** When the service's use was last asked for: a drop seen now happened after that. */
  #lastAskedAt: number | undefined;
  /** Bounds of a window's start, narrowed with every reset seen (windows follow each other). */
  #phase: { earliest: number; latest: number } | undefined;
  /** When a drop in the service's use (a reset) was last seen. */
  #droppedAt: number | undefined;
  #closed = false;
  #learning: Promise<void> | undefined;

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
   * Asks for the window's use at the rerun's cadence until a reset is seen, so that the rerun
   * knows where the service's windows begin (their tail) by its first bulk: called when a
   * rerun starts, while its partners are counted. Learned from its bulks' asks alone, the
   * first window of every rerun was reckoned from a guess, its tail never came, and what live
   * work was expected to need went unused (benchmark rerun: the first window 94-97 % used,
   * every later one 100 %). Without a usage API, or its window's length, there is nothing to
   * learn; where no reset shows in two windows' time (nothing was used), it stops asking.
   */
  learnWindow(): Promise<void> {
    this.#learning ??= this.#learnWindow().finally(() => (this.#learning = undefined));
    return this.#learning;
  }

  async #learnWindow(): Promise<void> {
    const sleep = this.#options.sleep ?? defaultSleep;
    const now = this.#options.now ?? Date.now;
    const started = now();
    while (!this.#closed && !this.#phase) {
      // One ask at a time with the bulks' asks: each reset seen is bounded by the ask before it.
      const asked = this.#turn.then(() => this.#askRoom());
      this.#turn = asked.catch(() => {});
      const answer = await asked;
      if (!answer || this.#phase) return;
      const { room, at } = answer;
      if (room.windowMs === undefined || at - started >= 2 * room.windowMs) return;
      await sleep(this.#nextAsk(room, this.#timeLeft(room, at), at));
    }
  }

  /**
   * Resolves with the units consumed for a rerun's bulk (at most `needed()`), once live work
   * leaves room for them; 0 when nothing is needed any more. `claim` is told, as each consume
   * is asked for, how many of the bulk's tasks it is for: until then live work may take them.
   */
  acquire(
    needed: () => number,
    share: () => number,
    claim: (units: number) => void = () => {},
  ): Promise<number> {
    const turn = this.#turn.then(() => this.#acquire(needed, share, claim));
    this.#turn = turn.catch(() => {});
    return turn;
  }

  async #acquire(needed: () => number, share: () => number, claim: (units: number) => void): Promise<number> {
    // The gate asks what to take just before it takes it (from its credit, or in a consume).
    const claiming = (units: () => number) => (): number => {
      const asked = units();
      claim(asked);
      return asked;
    };
    const sleep = this.#options.sleep ?? defaultSleep;
    for (;;) {
      if (this.#closed) return 0;
      const wanted = needed();
      if (wanted === 0) return 0;
      if (this.#gate.exhausted || this.#gate.pending > 0) {
        // A live consume merely in flight ends in milliseconds: waited out for a whole retry,
        // it let the window's tail pass unasked (benchmark rerun: windows 96 % used).
        await sleep(
          this.#gate.exhausted
            ? this.#options.retryMs
            : Math.min(this.#options.retryMs, IN_FLIGHT_RECHECK_MS),
        );
        continue;
      }
      const answer = await this.#askRoom();
      if (!answer) return this.#consumed(await this.#gate.acquire(claiming(needed)));
      const { room, at } = answer;
      // At least a unit: a share below one unit of the window (0.05 of 10, or a replica's part
      // of it) came to none, and the rerun asked for ever without taking anything.
      const shareOfWindow = Math.max(1, Math.floor(share() * room.max));
      // Before it has seen a whole window, the rerun expects live work to need what it consumed
      // over the last window's length before the rerun began; only where the process is younger
      // than that, everything the rerun's share does not claim. Starting from that guess alone
      // kept less than live used (40 % of a window against 30 % left by a share of 0.7), and
      // live records were refused for the rerun's first windows (benchmark rerun: live p95 2.2x).
      if (this.#othersLast === undefined && room.windowMs !== undefined && this.#used === 0)
        this.#othersLast = this.#gate.consumedWithin(room.windowMs);
      const expected =
        this.#othersLast === undefined ? room.max - shareOfWindow : Math.ceil(this.#othersLast * LIVE_MARGIN);
      const timeLeft = this.#timeLeft(room, at);
      const inTail = timeLeft <= tailOf(room.windowMs);
      const reserve = inTail
        ? 0
        : Math.min(
            Math.max(0, expected - (room.max - room.left - this.#used)),
            Math.ceil(expected * Math.min(1, 2 * timeLeft)),
          );
      // In the tail the rerun takes what is left, but first pays ahead for the live work still
      // expected before the window ends, as late as it can end: taken by the rerun, it left
      // those live records refused, their intake paused until the next window (benchmark
      // rerun: live p95 3.4x of the same load without a rerun, with every window used up).
      const credit = inTail
        ? Math.max(
            0,
            Math.ceil(expected * (timeLeft + this.#uncertainty(room)) * LIVE_MARGIN) - this.#gate.credit,
          )
        : 0;
      const allowed = Math.min(wanted, room.left - reserve - credit, shareOfWindow - this.#used);
      // Before the tail, a bulk waits until a quarter of it can go: granted what the shrinking
      // reserve freed every few milliseconds, the rerun sent bulks of 1 to 10 tasks, each
      // created, recorded and read like a full one (benchmark rerun: 25 bulks a window for 840).
      // Where the window's end is not known there is no tail to wait for.
      const worthABulk = !this.#phase || inTail || allowed >= Math.ceil(wanted * MIN_BULK_PART);
      if (allowed <= 0 || !worthABulk) {
        // In the tail (the only place credit is due), taking nothing still pays ahead for live
        // work, up to what is left: left alone when live work was expected to need more than
        // that, it went unused (benchmark rerun: windows 96 % used).
        if (credit > 0 && room.left > 0)
          this.#serviceUsed += await this.#gate.prepay(Math.min(credit, room.left));
        await sleep(this.#nextAsk(room, timeLeft, at));
        continue;
      }
      if (credit > 0) this.#serviceUsed += await this.#gate.prepay(credit);
      const granted = await this.#gate.acquire(
        claiming(() => Math.min(allowed, needed())),
        { fromCredit: false },
      );
      this.#used += granted;
      this.#serviceUsed += granted;
      return this.#consumed(granted);
    }
  }

  #consumed(tasks: number): number {
    if (tasks > 0) pipelineEvents.rerun.publish({ type: 'quota', tasks });
    return tasks;
  }

  /**
   * How long to wait before asking again: a twentieth of the window where it is told, no
   * later than the moment its tail begins, and no later than the middle of the
   * span the next reset is known to lie in. Asked at a fixed cadence only, the ask that may
   * take the tail came anywhere in it, late ones after the reset (benchmark rerun: windows
   * 97.7 % used, 16 of 36 at >= 98 %); the ask in the middle halves that span at each reset
   * (a reset is seen by it, or not yet), so the tail is known to a few milliseconds.
   */
  #nextAsk(room: QuotaRoom, timeLeft: number, at: number): number {
    const { retryMs } = this.#options;
    const { windowMs } = room;
    if (windowMs === undefined) return retryMs;
    const waits = [Math.min(retryMs, Math.max(10, Math.round(windowMs * CADENCE)))];
    const untilTail = (timeLeft - tailOf(windowMs)) * windowMs;
    if (untilTail > 0) waits.push(untilTail);
    if (this.#phase) {
      const middle = (this.#phase.earliest + this.#phase.latest) / 2;
      waits.push(windowMs - intoWindow(at, middle, windowMs));
    }
    return Math.max(1, Math.round(Math.min(...waits)));
  }

  /**
   * The part of the window still ahead, where a reset was seen and the window's length is
   * told; else 1. Reckoned from the earliest the window can have begun: a reset is seen only
   * at the next ask, up to a twentieth of a window later, and reckoned from then, the tail
   * the rerun fills would begin after the window had ended.
   */
  #timeLeft(room: QuotaRoom, at: number): number {
    if (!this.#phase || room.windowMs === undefined) return 1;
    const into = intoWindow(at, this.#phase.earliest, room.windowMs);
    const resetSeen = this.#droppedAt !== undefined && this.#droppedAt >= at - into;
    // Between the earliest and the latest the reset can come, it has not come while no drop
    // was seen since that span began: the old window's tail still runs. Taken for the new
    // window's start, what was left of the old one went unused (benchmark rerun: 80 units).
    if (!resetSeen && into <= this.#phase.latest - this.#phase.earliest) return 0;
    return 1 - into / room.windowMs;
  }

  /** How much later than reckoned the window can end, as a part of it. */
  #uncertainty(room: QuotaRoom): number {
    if (!this.#phase || room.windowMs === undefined) return 0;
    return (this.#phase.latest - this.#phase.earliest) / room.windowMs;
  }

  /**
   * A reset seen: it happened after the ask before (`after`) and before the answer (`by`).
   * Windows follow each other at the same length, so the bounds of every reset seen, shifted
   * by whole windows, narrow the start down; bounds that disagree (the service changed its
   * windows) start over.
   */
  #narrowPhase(after: number, by: number, windowMs: number): void {
    const known = this.#phase;
    if (known) {
      const shift = Math.round((by - known.latest) / windowMs) * windowMs;
      const earliest = Math.max(after, known.earliest + shift);
      const latest = Math.min(by, known.latest + shift);
      if (earliest <= latest) {
        this.#phase = { earliest, latest };
        return;
      }
    }
    this.#phase = { earliest: after, latest: by };
  }

  /** Asks the service for the window's use and tracks it; undefined where it cannot tell. */
  async #askRoom(): Promise<{ room: QuotaRoom; at: number } | undefined> {
    const now = this.#options.now ?? Date.now;
    const asked = now();
    const room = await this.#check.room?.().catch(() => undefined);
    if (!room) return undefined;
    const at = now();
    this.#track(room, asked, at);
    return { room, at };
  }

  /** Starts the count again when a new window began. */
  #track(room: QuotaRoom, asked: number, at: number): void {
    const serviceUsed = room.max - room.left;
    const dropped = serviceUsed < this.#serviceUsed;
    if (dropped) this.#droppedAt = at;
    const after = this.#lastAskedAt ?? asked;
    // A reset seen a window or more after the ask before says nothing about when it came.
    if (dropped && room.windowMs !== undefined && at - after < room.windowMs)
      this.#narrowPhase(after, at, room.windowMs);
    this.#lastAskedAt = asked;
    // Reckoned from when the ask left, not from its answer: the service may have read its use
    // just before the reset, and a window's length counted to the answer restarted the count
    // then; the drop seen at the next ask restarted it again, with the whole window put down
    // to live work (benchmark rerun: live work expected to need 1,680 of 1,400, and a window
    // 73 % used).
    const elapsed = room.windowMs !== undefined && asked - this.#countSince >= room.windowMs;
    if (dropped || elapsed || this.#serviceUsed < 0) {
      // Counted from a start seen, a window's length later is the next start; a guess stays one.
      this.#startSeen = dropped || (elapsed && this.#startSeen);
      if (this.#serviceUsed >= 0) this.#othersLast = Math.max(0, this.#serviceUsed - this.#used);
      this.#used = 0;
      this.#countSince =
        !dropped && this.#startSeen && room.windowMs !== undefined
          ? this.#countSince + Math.floor((asked - this.#countSince) / room.windowMs) * room.windowMs
          : at;
    }
    this.#serviceUsed = serviceUsed;
  }
}
