// Times written as text, read strictly: Date.parse takes many shapes besides ISO 8601 ("1" is
// 2001-01-01, "12/31/2030", "Tuesday 5 March 2030"), and rolls a day the month does not have
// over into the next one (2030-02-30 is March 2).

/** Whether year-month-day is a day of the calendar. */
export function isCalendarDay(year: number, month: number, day: number): boolean {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // Date.UTC maps years 0-99 to 19xx
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

// A time needs its offset: without one Date.parse takes the process's time zone.
const RFC_3339 =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(?:[01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(?:\.\d+)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d))?$/i;

/**
 * An RFC 3339 date-time, or a full date (midnight UTC), as epoch ms; undefined for any other
 * text. A leap second (23:59:60 UTC, in whatever offset) is the next day's first second:
 * epoch ms, like POSIX time, have no room for it, and Date.parse refuses it.
 */
export function rfc3339Millis(text: string): number | undefined {
  const date = RFC_3339.exec(text);
  if (!date || !isCalendarDay(Number(date[1]), Number(date[2]), Number(date[3]))) return undefined;
  if (date[4] !== '60') return Date.parse(text);
  const before = new Date(Date.parse(`${text.slice(0, 17)}59${text.slice(19)}`));
  return before.getUTCHours() === 23 && before.getUTCMinutes() === 59 ? before.getTime() + 1_000 : undefined;
}
