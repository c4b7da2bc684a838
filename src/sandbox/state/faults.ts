// Fault injection: the settings (from the start options, changeable at run time through
// PUT /admin/faults) and the decisions drawn from them. Decisions come from a seeded random
// source so a test that sets a 30 % error rate sees the same requests fail on every run.

import { z } from 'zod';
import { MAX_TIMER_MS } from '../../timer-limit.ts';
import { Random } from '../dataset/random.ts';

const share = z.number().min(0).max(1);
// Node's timers take at most 2^31-1 ms; a longer latency fired at once (1 ms, with a warning).
const milliseconds = z.number().int().min(0).max(MAX_TIMER_MS);

export const faultSettingsSchema = z.strictObject({
  /** Added to every API request before it is handled. */
  latencyMs: milliseconds.default(0),
  /** Up to this much more, drawn per request. */
  latencyJitterMs: milliseconds.default(0),
  /** Share of API requests answered 503 without being processed. */
  errorRate: share.default(0),
  /** Share of API requests answered 429 with Retry-After without being processed. */
  throttleRate: share.default(0),
  /**
   * Share of API requests whose connection is reset (TCP RST) without an answer, once the
   * request was read and before it is processed: the client cannot tell it was not processed.
   */
  resetRate: share.default(0),
  /** Retry-After of the injected 429s, in seconds. */
  retryAfterSeconds: z.number().int().min(0).default(1),
  /** Share of bulk lookup tasks that end with status FAILED. */
  taskFailureRate: share.default(0),
  /** Share of EXTD lookup and event store initializer jobs that die half-way. */
  jobDeathRate: share.default(0),
  /**
   * Requests to the reference data API answer 403 whatever their API key or bearer token, as
   * after the credentials were revoked (or rotated away) on the platform.
   */
  credentialsRevoked: z.boolean().default(false),
  /** Every quota consume answers OVER_LIMIT (and consumes nothing). */
  overLimit: z.boolean().default(false),
  /**
   * API requests are held, unprocessed, until this is switched off (a hung service). A test
   * that freezes the sandbox before reading its audit and counters, then kills it, reads all
   * it ever processed: nothing is processed between the read and the kill.
   */
  frozen: z.boolean().default(false),
});

export type FaultSettings = z.output<typeof faultSettingsSchema>;
export type FaultSettingsInput = z.input<typeof faultSettingsSchema>;

type Defaulted = Record<string, z.ZodDefault<z.ZodType>>;

/** The same members, each optional and without its default. */
const withoutDefaults = <Shape extends Defaulted>(shape: Shape) =>
  Object.fromEntries(Object.entries(shape).map(([name, member]) => [name, member.unwrap().optional()])) as {
    [Name in keyof Shape]: z.ZodOptional<ReturnType<Shape[Name]['unwrap']>>;
  };

/**
 * PUT /admin/faults changes only the members it names. Not `.partial()`: zod 4 gives a
 * member left out its default even there, so a PUT naming one member put every other back to
 * its default (a latency from the start options, a freeze).
 */
export const faultSettingsPatchSchema = z.strictObject(withoutDefaults(faultSettingsSchema.shape));

export type RequestFault =
  { kind: 'server-error' } | { kind: 'throttled'; retryAfterSeconds: number } | { kind: 'reset' } | undefined;

export class Faults {
  readonly #initial: FaultSettings;
  readonly #seed: number;
  #settings: FaultSettings;
  #random: Random;
  /** Resolved when the sandbox is no longer frozen. */
  #thawed = Promise.withResolvers<undefined>();

  constructor(initial: FaultSettings, seed: number) {
    this.#initial = Object.freeze({ ...initial });
    this.#seed = seed;
    this.#settings = this.#initial;
    this.#random = new Random(seed);
  }

  get settings(): FaultSettings {
    return this.#settings;
  }

  update(patch: Partial<FaultSettings>): FaultSettings {
    const defined = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
    this.#settings = Object.freeze({ ...this.#settings, ...defined });
    this.#wakeIfThawed();
    return this.#settings;
  }

  /** Back to the start options and the start of the random sequence. */
  reset(): void {
    this.#settings = this.#initial;
    this.#random = new Random(this.#seed);
    this.#wakeIfThawed();
  }

  /** Resolves once the sandbox is not frozen (at once when it is not). */
  async unfrozen(): Promise<void> {
    while (this.#settings.frozen) await this.#thawed.promise;
  }

  #wakeIfThawed(): void {
    if (this.#settings.frozen) return;
    this.#thawed.resolve(undefined);
    this.#thawed = Promise.withResolvers<undefined>();
  }

  /** Draws a number only for a fault that is switched on, so switching one on leaves the others' sequence alone. */
  #roll(share: number): boolean {
    return share > 0 && this.#random.next() < share;
  }

  latencyMs(): number {
    const { latencyMs, latencyJitterMs } = this.#settings;
    return latencyMs + (latencyJitterMs > 0 ? this.#random.int(latencyJitterMs + 1) : 0);
  }

  requestFault(): RequestFault {
    const { errorRate, throttleRate, resetRate, retryAfterSeconds } = this.#settings;
    if (this.#roll(throttleRate)) return { kind: 'throttled', retryAfterSeconds };
    if (this.#roll(errorRate)) return { kind: 'server-error' };
    if (this.#roll(resetRate)) return { kind: 'reset' };
    return undefined;
  }

  taskFails(): boolean {
    return this.#roll(this.#settings.taskFailureRate);
  }

  jobDies(): boolean {
    return this.#roll(this.#settings.jobDeathRate);
  }

  get overLimit(): boolean {
    return this.#settings.overLimit;
  }
}
