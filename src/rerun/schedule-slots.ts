// When a scheduled rerun is due. A slot is a point in time every replica of `run` computes
// the same way from the configuration alone, whatever its start time: the job id is derived
// from it, so replicas that tick together write one job.
//
// Cron expressions are read by croner: no dependencies (cron-parser 5 brings luxon), time
// zones through Intl, and its 11th major release aligned daylight-saving handling with
// Vixie cron (a 02:30 slot in a spring-forward gap runs once, right after the gap), which
// is what an operator who writes a nightly cron in local time expects.
import { Cron } from 'croner';

/** Either a fixed interval (ms, at least MIN_INTERVAL_MS) or a 5-field cron expression. */
export type RerunScheduleSpec = { everyMs: number } | { cron: string; timezone?: string };

export interface ScheduleSlots {
  /** The first slot strictly after `time` (epoch ms); undefined when none is left. */
  after(time: number): number | undefined;
  /** The latest slot at or before `time` (epoch ms). */
  atOrBefore(time: number): number | undefined;
  /** The schedule as a job records it: `every 24h`, `cron 0 2 * * * Europe/Berlin`. */
  readonly description: string;
}

/** A rerun reads every stored partner: more often than this is a mistake, not a schedule. */
export const MIN_INTERVAL_MS = 60_000;

/**
 * Slots decades apart (`30000d` for `30d`) are a mistake too; a yearly rerun is better kept
 * at a calendar date by a cron expression than every 365 days since 1970.
 */
export const MAX_INTERVAL_MS = 365 * 86_400_000;

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 } as const;
const INTERVAL_TEXT = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/** `1d`, `24h`, `30m`, `1h30m`, `90s` in ms; undefined for anything else. */
export function parseInterval(text: string): number | undefined {
  const match = INTERVAL_TEXT.exec(text.trim());
  if (!match || match[0] === '') return undefined;
  const [, days, hours, minutes, seconds] = match;
  return (
    Number(days ?? 0) * UNIT_MS.d +
    Number(hours ?? 0) * UNIT_MS.h +
    Number(minutes ?? 0) * UNIT_MS.m +
    Number(seconds ?? 0) * UNIT_MS.s
  );
}

/** The interval in hours, minutes and seconds (`24h`, `1h30m`): one spelling for one interval. */
export function formatInterval(ms: number): string {
  const parts: [number, string][] = [
    [Math.floor(ms / UNIT_MS.h), 'h'],
    [Math.floor((ms % UNIT_MS.h) / UNIT_MS.m), 'm'],
    [Math.floor((ms % UNIT_MS.m) / UNIT_MS.s), 's'],
  ];
  return parts
    .filter(([count]) => count > 0)
    .map(([count, unit]) => `${count}${unit}`)
    .join('');
}

/** Why the interval text cannot be a schedule, or undefined when it can. */
export function intervalProblem(text: string): string | undefined {
  const ms = parseInterval(text);
  if (ms === undefined) return 'must be a duration such as 24h, 30m or 1h30m (units d, h, m, s)';
  if (ms < MIN_INTERVAL_MS) return 'must be at least 1m';
  if (ms > MAX_INTERVAL_MS)
    return "must be at most 365d; for rarer reruns, a cron expression (yearly: '0 2 1 1 *')";
  return undefined;
}

export function timezoneProblem(timezone: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
    return undefined;
  } catch {
    return 'must be an IANA time zone such as UTC or Europe/Berlin';
  }
}

const cronOf = (expression: string, timezone: string | undefined) =>
  new Cron(expression, { mode: '5-part', ...(timezone === undefined ? {} : { timezone }) });

/** Why the cron expression cannot be a schedule, or undefined when it can. */
export function cronProblem(expression: string): string | undefined {
  let cron: Cron;
  try {
    cron = cronOf(expression, undefined);
  } catch (error) {
    return `must be a 5-field cron expression (minute hour day-of-month month day-of-week): ${(error as Error).message}`;
  }
  // `0 0 30 2 *` parses, and would never run: say so at start rather than wait forever.
  return cron.nextRun() === null ? 'never matches a date' : undefined;
}

/**
 * Interval slots are the multiples of the interval since the Unix epoch (UTC): `24h` is
 * every midnight UTC, `6h` is 00:00, 06:00, 12:00 and 18:00 UTC. Anchoring to the epoch
 * rather than to the process's start is what makes the slots the same on every replica.
 * The epoch is the anchor, not a slot: an interval longer than the time since then made
 * 1970-01-01 the latest slot that passed, and a catch-up created its job.
 */
function intervalSlots(ms: number): ScheduleSlots {
  return {
    after: (time) => (Math.max(0, Math.floor(time / ms)) + 1) * ms,
    atOrBefore: (time) => {
      const count = Math.floor(time / ms);
      return count >= 1 ? count * ms : undefined;
    },
    description: `every ${formatInterval(ms)}`,
  };
}

function cronSlots(expression: string, timezone: string | undefined): ScheduleSlots {
  const cron = cronOf(expression, timezone);
  return {
    after: (time) => cron.nextRun(new Date(time))?.getTime(),
    // croner's previous runs are strictly before the reference: 1 ms later includes `time`.
    atOrBefore: (time) => cron.previousRuns(1, new Date(time + 1))[0]?.getTime(),
    description: ['cron', expression.trim(), timezone].filter((part) => part !== undefined).join(' '),
  };
}

/** The slots of a validated schedule (the configuration checks it with the *Problem functions). */
export function scheduleSlots(spec: RerunScheduleSpec): ScheduleSlots {
  return 'everyMs' in spec ? intervalSlots(spec.everyMs) : cronSlots(spec.cron, spec.timezone);
}
