import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_POLICY,
  isRetryable,
  nextRetryDelayMs,
  parseRetryAfterMs,
} from '../../src/refdata/retry-policy.ts';
import { backoffDelay } from '../../src/retry/backoff.ts';

const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1_000 };
const backoff = { initialDelayMs: 100, maxDelayMs: 1_000 };
const NOW = Date.parse('2025-01-01T00:00:00Z');

describe('the retry policy', () => {
  it('draws each backoff between half and all of the doubled ceiling, capped at maxDelayMs', () => {
    expect([1, 2, 3, 4, 5].map((retry) => backoffDelay(retry, backoff, () => 0))).toEqual([
      50, 100, 200, 400, 500,
    ]);
    expect([1, 2, 3, 4, 5].map((retry) => backoffDelay(retry, backoff, () => 1))).toEqual([
      100, 200, 400, 800, 1_000,
    ]);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfterMs('120', NOW)).toBe(120_000);
    expect(parseRetryAfterMs(new Date(NOW + 30_000).toUTCString(), NOW)).toBe(30_000);
    expect(parseRetryAfterMs(new Date(NOW - 30_000).toUTCString(), NOW)).toBe(0);
    expect(parseRetryAfterMs('soon', NOW)).toBeUndefined();
    expect(parseRetryAfterMs(undefined, NOW)).toBeUndefined();
  });

  it.each([
    [{ kind: 'status', status: 429 }, false, true],
    [{ kind: 'status', status: 408 }, false, true],
    [{ kind: 'status', status: 503 }, true, true],
    [{ kind: 'status', status: 503 }, false, false],
    [{ kind: 'status', status: 400 }, true, false],
    [{ kind: 'status', status: 404 }, true, false],
    [{ kind: 'network', systemCode: 'ECONNRESET' }, true, true],
    [{ kind: 'network', systemCode: 'ECONNRESET' }, false, false],
    [{ kind: 'network', systemCode: 'ECONNREFUSED' }, false, true],
    [{ kind: 'timeout' }, true, true],
    [{ kind: 'timeout' }, false, false],
  ] as const)(
    'judges %j on an operation safe to retry=%s as retryable=%s',
    (failure, safeToRetry, retryable) => {
      expect(isRetryable(failure, safeToRetry)).toBe(retryable);
    },
  );

  it('prefers Retry-After over backoff, and gives up past maxAttempts or maxRetryAfterMs', () => {
    const random = () => 0.5;
    expect(nextRetryDelayMs({ canRetry: true, retryAfterMs: 2_000 }, 1, policy, random)).toBe(2_000);
    expect(nextRetryDelayMs({ canRetry: true }, 1, policy, random)).toBe(75);
    expect(nextRetryDelayMs({ canRetry: true }, policy.maxAttempts, policy, random)).toBeUndefined();
    expect(nextRetryDelayMs({ canRetry: false }, 1, policy, random)).toBeUndefined();
    expect(nextRetryDelayMs({ canRetry: true, retryAfterMs: 61_000 }, 1, policy, random)).toBeUndefined();
  });
});
