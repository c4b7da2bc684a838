// The retry policy of the reference data client, in one place. Which failures may be repeated
// depends on the operation: a read repeated after a network error or a 5xx is harmless, a
// create repeated after a 5xx may have been processed already and would be created twice.
// A 429 or a 408 (the server timed out waiting for the request, RFC 9110 15.5.9) means the
// request was not processed, so it may be repeated for every operation.
import { backoffDelay } from '../retry/backoff.ts';

export interface RetryPolicy {
  /** Attempts per call, the first included. */
  maxAttempts: number;
  /** Delay before the first retry; doubles per retry. */
  baseDelayMs: number;
  /** Ceiling of the exponential delay. */
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the call fails with the 429. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 4,
  baseDelayMs: 200,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 60_000,
});

/** Time and chance, injected so tests observe the requested delays instead of waiting. */
export interface RetryEnvironment {
  now(): number;
  random(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * Connection failures where the request provably never reached the server: safe to repeat
 * even for a create.
 */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

export type Failure =
  { kind: 'status'; status: number } | { kind: 'network'; systemCode?: string } | { kind: 'timeout' };

/** Whether repeating the call after this failure is sound; travels on the error as `canRetry`. */
export function isRetryable(failure: Failure, safeToRetry: boolean): boolean {
  switch (failure.kind) {
    case 'status':
      if (failure.status === 429 || failure.status === 408) return true;
      return safeToRetry && failure.status >= 500;
    case 'network':
      return safeToRetry || (failure.systemCode !== undefined && NOT_SENT_CODES.has(failure.systemCode));
    case 'timeout':
      return safeToRetry;
  }
}

/**
 * Retry-After as delay-seconds or an HTTP date; undefined when absent or unreadable. Every form of
 * HTTP-date (RFC 9110 5.6.7) names the weekday and the month: Date.parse alone also takes "1.5" or
 * "-5" for a date decades past, which made a malformed value a wait of 0 ms.
 */
export function parseRetryAfterMs(header: string | undefined, now: number): number | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!/^[A-Za-z]{3}/.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export interface RetryableError {
  canRetry: boolean;
  retryAfterMs?: number | undefined;
}

/**
 * The delay before the next attempt, or undefined to give up. `attempt` is the attempt that
 * just failed, counted from 1. A server's Retry-After wins over the computed backoff.
 */
export function nextRetryDelayMs(
  error: RetryableError,
  attempt: number,
  policy: RetryPolicy,
  random: () => number,
): number | undefined {
  if (!error.canRetry || attempt >= policy.maxAttempts) return undefined;
  if (error.retryAfterMs !== undefined) {
    return error.retryAfterMs <= policy.maxRetryAfterMs ? error.retryAfterMs : undefined;
  }
  return backoffDelay(attempt, { initialDelayMs: policy.baseDelayMs, maxDelayMs: policy.maxDelayMs }, random);
}
