// The spec does not show the allowed `reset` values of a quota (the window a quota's
// `maxAmount` is allowed per). Read here, by the sandbox that keeps quotas and by the quota gate
// that paces its checks to the window: an ISO 8601 duration of fixed length (days, hours,
// minutes, seconds, weeks: PT1M, PT1H, P1D, P1W) or a whole number of seconds ("60"). Years and months are refused: their length varies, and a
// quota window that silently means "30 days" would surprise.

const ISO_DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;
const SECONDS = /^\d+$/;

/** Window length in ms, or undefined when `reset` is not an accepted form or not positive. */
export function parseQuotaReset(reset: string): number | undefined {
  const text = reset.trim().toUpperCase();
  if (SECONDS.test(text)) return positive(Number(text) * 1000);
  const match = ISO_DURATION.exec(text);
  if (!match || text === 'P' || text.endsWith('T')) return undefined;
  const [, weeks, days, hours, minutes, seconds] = match.map((part) => Number(part ?? 0));
  const totalSeconds =
    (weeks ?? 0) * 604_800 +
    (days ?? 0) * 86_400 +
    (hours ?? 0) * 3_600 +
    (minutes ?? 0) * 60 +
    (seconds ?? 0);
  return positive(totalSeconds * 1000);
}

const positive = (ms: number): number | undefined => (ms > 0 ? ms : undefined);

export const QUOTA_RESET_FORMS =
  'an ISO 8601 duration of weeks, days, hours, minutes, seconds (e.g. PT1M) or seconds';
