// Exponential backoff with "equal jitter": half of the delay is fixed, half random, so
// that retries neither stampede together nor collapse towards zero.

export interface BackoffOptions {
  initialDelayMs: number;
  maxDelayMs: number;
}

/** Delay before retry number `attempt` (1 = the first retry). */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions,
  random: () => number = Math.random,
): number {
  const exponential = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exponential / 2 + (random() * exponential) / 2);
}
