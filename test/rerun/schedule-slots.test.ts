import { describe, expect, it } from 'vitest';
import {
  cronProblem,
  formatInterval,
  intervalProblem,
  parseInterval,
  scheduleSlots,
  timezoneProblem,
} from '../../src/rerun/schedule-slots.ts';

const at = (iso: string) => Date.parse(iso);
const iso = (time: number | undefined) => (time === undefined ? undefined : new Date(time).toISOString());

/** The first `count` slots after `from`, as ISO strings. */
function slotsAfter(slots: ReturnType<typeof scheduleSlots>, from: string, count: number): string[] {
  const found: string[] = [];
  let time = at(from);
  for (let i = 0; i < count; i++) {
    const next = slots.after(time);
    if (next === undefined) break;
    found.push(new Date(next).toISOString());
    time = next;
  }
  return found;
}

describe('intervals', () => {
  it('are read in days, hours, minutes and seconds, in that order', () => {
    expect(parseInterval('24h')).toBe(86_400_000);
    expect(parseInterval('1d')).toBe(86_400_000);
    expect(parseInterval('1h30m')).toBe(5_400_000);
    expect(parseInterval(' 30m ')).toBe(1_800_000);
    expect(parseInterval('90s')).toBe(90_000);
    for (const text of ['', '24', 'h', '1.5h', '-1h', '30m1h', '24 h', 'PT24H'])
      expect(parseInterval(text), text).toBeUndefined();
  });

  it('must be at least a minute', () => {
    expect(intervalProblem('59s')).toBe('must be at least 1m');
    expect(intervalProblem('0m')).toBe('must be at least 1m');
    expect(intervalProblem('1m')).toBeUndefined();
    expect(intervalProblem('daily')).toMatch(/^must be a duration such as 24h/);
  });

  it('regression: 30000d was taken (its first slot in 2052, and a catch-up at start fired 1970-01-01): at most 365d', () => {
    expect(intervalProblem('365d')).toBeUndefined();
    for (const text of ['366d', '30000d', '9000000h'])
      expect(intervalProblem(text), text).toBe(
        "must be at most 365d; for rarer reruns, a cron expression (yearly: '0 2 1 1 *')",
      );
  });

  it('are written back in hours, minutes and seconds', () => {
    expect(formatInterval(86_400_000)).toBe('24h');
    expect(formatInterval(5_400_000)).toBe('1h30m');
    expect(formatInterval(90_000)).toBe('1m30s');
  });
});

describe('interval slots', () => {
  const sixHours = scheduleSlots({ everyMs: 6 * 3_600_000 });

  it('are the multiples of the interval since the epoch, whenever the process started', () => {
    expect(slotsAfter(sixHours, '2025-03-10T07:13:02.345Z', 3)).toEqual([
      '2025-03-10T12:00:00.000Z',
      '2025-03-10T18:00:00.000Z',
      '2025-03-11T00:00:00.000Z',
    ]);
    expect(sixHours.description).toBe('every 6h');
  });

  it('include the time itself as the latest slot at or before it, and exclude it as the next one', () => {
    expect(iso(sixHours.atOrBefore(at('2025-03-10T12:00:00.000Z')))).toBe('2025-03-10T12:00:00.000Z');
    expect(iso(sixHours.atOrBefore(at('2025-03-10T11:59:59.999Z')))).toBe('2025-03-10T06:00:00.000Z');
    expect(iso(sixHours.after(at('2025-03-10T12:00:00.000Z')))).toBe('2025-03-10T18:00:00.000Z');
  });
});

describe('regression: an interval longer than the time since the epoch made 1970-01-01 a slot that passed', () => {
  // `--rerun-every 30000d --rerun-catch-up` created scheduled-19700101T000000Z at start: the
  // epoch anchors the slots, it is none of them.
  it('has no slot at or before the epoch, and the first slot one interval after it', () => {
    const day = 86_400_000;
    const long = scheduleSlots({ everyMs: 30_000 * day });
    expect(long.atOrBefore(at('2026-11-29T00:00:00Z'))).toBeUndefined();
    expect(iso(long.after(at('2026-11-29T00:00:00Z')))).toBe('2052-02-20T00:00:00.000Z');
    const sixHours = scheduleSlots({ everyMs: 6 * 3_600_000 });
    expect(sixHours.atOrBefore(at('1970-01-01T05:59:59.999Z'))).toBeUndefined();
    expect(iso(sixHours.atOrBefore(at('1970-01-01T06:00:00Z')))).toBe('1970-01-01T06:00:00.000Z');
  });
});

describe('cron slots', () => {
  it('follow a 5-field expression in UTC by default', () => {
    const nightly = scheduleSlots({ cron: '0 2 * * *' });
    expect(slotsAfter(nightly, '2025-03-10T02:00:00.000Z', 2)).toEqual([
      '2025-03-11T02:00:00.000Z',
      '2025-03-12T02:00:00.000Z',
    ]);
    expect(iso(nightly.atOrBefore(at('2025-03-10T02:00:00.000Z')))).toBe('2025-03-10T02:00:00.000Z');
    expect(iso(nightly.atOrBefore(at('2025-03-10T01:59:59.999Z')))).toBe('2025-03-09T02:00:00.000Z');
    expect(nightly.description).toBe('cron 0 2 * * *');
  });

  it('follow the wall clock of a time zone, once per day across daylight saving changes', () => {
    const berlin = scheduleSlots({ cron: '30 2 * * *', timezone: 'Europe/Berlin' });
    // 2025-03-30 has no 02:30 in Berlin: the slot is the first time after the gap, 03:00 CEST.
    expect(slotsAfter(berlin, '2025-03-28T12:00:00Z', 4)).toEqual([
      '2025-03-29T01:30:00.000Z',
      '2025-03-30T01:00:00.000Z',
      '2025-03-31T00:30:00.000Z',
      '2025-04-01T00:30:00.000Z',
    ]);
    // 2025-10-26 has 02:30 twice: one slot, at the first.
    expect(slotsAfter(berlin, '2025-10-25T12:00:00Z', 2)).toEqual([
      '2025-10-26T00:30:00.000Z',
      '2025-10-27T01:30:00.000Z',
    ]);
    expect(berlin.description).toBe('cron 30 2 * * * Europe/Berlin');
  });

  it('reject what is not a 5-field expression, or never matches', () => {
    expect(cronProblem('0 2 * * *')).toBeUndefined();
    expect(cronProblem('@daily')).toBeUndefined();
    expect(cronProblem('0 0 2 * * *')).toMatch(/^must be a 5-field cron expression/);
    expect(cronProblem('61 * * * *')).toMatch(/^must be a 5-field cron expression/);
    expect(cronProblem('nightly')).toMatch(/^must be a 5-field cron expression/);
    expect(cronProblem('0 0 30 2 *')).toBe('never matches a date');
  });

  it('take IANA time zones only', () => {
    expect(timezoneProblem('Europe/Berlin')).toBeUndefined();
    expect(timezoneProblem('UTC')).toBeUndefined();
    expect(timezoneProblem('Mars/Olympus')).toMatch(/^must be an IANA time zone/);
  });
});
