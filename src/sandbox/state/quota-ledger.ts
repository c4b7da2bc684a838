// Rate-limit quotas (identity API) and their consumption (service usage API). A quota allows
// `maxAmount` per `reset` window; windows are aligned to the epoch on the sandbox clock (a
// PT1M window runs from one whole minute to the next), so tests move the clock across a
// boundary instead of waiting. The most specific quota applies: the workspace's own, else the
// organization's. Without any quota, consumption is allowed and still counted.

import type { Clock } from '../clock.ts';

export const QUOTA_SCOPES = ['organization', 'system'] as const;
export type QuotaScope = (typeof QUOTA_SCOPES)[number];

export interface QuotaTarget {
  serviceKey: string;
  organizationId: string;
  workspaceId?: string | undefined;
}

export interface RateLimitQuota extends QuotaTarget {
  scope: QuotaScope;
  maxAmount: number;
  reset: string;
  resetMs: number;
}

export interface QuotaUse {
  quota: RateLimitQuota | undefined;
  /** Consumed in the current window of the applicable quota (or in total, without one). */
  used: number;
}

export type ConsumeOutcome = 'OK' | 'OVER_LIMIT';

/** A consume answered OK (GET /admin/quota-audit): its number since the start or reset, its time, its units. */
export interface ConsumeAuditEntry {
  n: number;
  /** Epoch milliseconds on the sandbox clock. */
  at: number;
  amount: number;
}

/** Consumes the audit keeps, the newest: a test reads it every few seconds, a benchmark not at all. */
const CONSUME_AUDIT_SIZE = 10_000;

interface WindowUse {
  windowStart: number;
  used: number;
}

const keyOf = (scope: QuotaScope, target: QuotaTarget): string =>
  [scope, target.serviceKey, target.organizationId, target.workspaceId ?? ''].join('\u0000');

export class QuotaLedger {
  readonly #clock: Clock;
  readonly #quotas = new Map<string, RateLimitQuota>();
  readonly #use = new Map<string, WindowUse>();
  #audit: ConsumeAuditEntry[] = [];
  #consumes = 0;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  upsert(quota: RateLimitQuota): void {
    this.#quotas.set(keyOf(quota.scope, quota), quota);
  }

  /** Every quota of a scope, in upsert order. */
  quotas(scope: QuotaScope): RateLimitQuota[] {
    return [...this.#quotas.values()].filter((quota) => quota.scope === scope);
  }

  /** The quota that applies to `target`: the workspace's own, else the organization's. */
  applicable(target: QuotaTarget, scope: QuotaScope = 'organization'): RateLimitQuota | undefined {
    const own = target.workspaceId === undefined ? undefined : this.#quotas.get(keyOf(scope, target));
    return own ?? this.#quotas.get(keyOf(scope, { ...target, workspaceId: undefined }));
  }

  use(target: QuotaTarget): QuotaUse {
    const quota = this.applicable(target);
    return { quota, used: this.#usedIn(quota ?? target, quota) };
  }

  /** Usage of one quota in its current window. */
  usedOf(quota: RateLimitQuota): number {
    return this.#usedIn(quota, quota);
  }

  /**
   * Consumes `amount` when it fits in what is left of the window; otherwise consumes nothing
   * and answers OVER_LIMIT. `-1` (allowed for jobs) only checks that some quota is left.
   */
  consume(target: QuotaTarget, amount: number): ConsumeOutcome {
    const quota = this.applicable(target);
    const counted = quota ?? target;
    const used = this.#usedIn(counted, quota);
    if (quota !== undefined) {
      const remaining = quota.maxAmount - used;
      if (amount === -1 ? remaining <= 0 : amount > remaining) return 'OVER_LIMIT';
    }
    if (amount > 0) {
      this.#use.set(keyOf('organization', counted), {
        windowStart: this.#windowStart(quota),
        used: used + amount,
      });
      this.#consumes += 1;
      this.#audit.push({ n: this.#consumes, at: this.#clock.now(), amount });
      if (this.#audit.length > CONSUME_AUDIT_SIZE) this.#audit = this.#audit.slice(-CONSUME_AUDIT_SIZE / 2);
    }
    return 'OK';
  }

  /** The newest consumes that consumed units, oldest first. */
  audit(): readonly ConsumeAuditEntry[] {
    return this.#audit;
  }

  clear(): void {
    this.#quotas.clear();
    this.#use.clear();
    this.#audit = [];
    this.#consumes = 0;
  }

  #windowStart(quota: RateLimitQuota | undefined): number {
    if (quota === undefined) return 0;
    return Math.floor(this.#clock.now() / quota.resetMs) * quota.resetMs;
  }

  #usedIn(counted: QuotaTarget, quota: RateLimitQuota | undefined): number {
    const entry = this.#use.get(keyOf('organization', counted));
    return entry !== undefined && entry.windowStart === this.#windowStart(quota) ? entry.used : 0;
  }
}

export type QuotaStatus = 'OK' | 'WARNING' | 'NOT_APPLICABLE';

/** NOT_APPLICABLE for a quota of zero (deactivated), WARNING once the window is used up. */
export function quotaStatus(quota: RateLimitQuota | undefined, used: number): QuotaStatus {
  if (quota === undefined) return 'OK';
  if (quota.maxAmount === 0) return 'NOT_APPLICABLE';
  return used >= quota.maxAmount ? 'WARNING' : 'OK';
}
