// OAuth 2.0 client-credentials tokens, cached until shortly before `expires_in` runs out. One
// refresh at a time: concurrent callers that find no valid token wait for the same token
// request instead of each issuing their own. Optionally a token due for refresh still serves
// while the refresh runs or fails (`usableForMs`), and the refresh runs by a timer
// (`refreshAhead`).
import { backoffDelay } from '../retry/backoff.ts';

export interface IssuedToken {
  access_token: string;
  /** Lifetime in seconds. */
  expires_in: number;
}

export interface TokenProviderOptions {
  requestToken: () => Promise<IssuedToken>;
  now: () => number;
  /**
   * Refresh this long before expiry, so a token does not expire between being handed out
   * and reaching the server. Capped at half the lifetime, so a short-lived token is not
   * refreshed on every call.
   */
  refreshMarginMs: number;
  /**
   * When set, a token due for refresh is still handed out while it has more than this left and
   * no new one came (the refresh under way, or failed: the next one is asked after a backoff).
   * Unset, a caller past the refresh point waits for the new token and gets its failure.
   */
  usableForMs?: number;
  /**
   * Refresh at the refresh point by a timer (and after a failure, after its backoff, until the
   * token expires), not at the first call after it: for callers that ask only when their token
   * is about to end.
   */
  refreshAhead?: boolean;
  /** Told about every new token so it can be redacted from errors. */
  onToken?: (token: string) => void;
  /** Told of a refresh that failed while the token in hand served: no caller hears of it. */
  onRefreshFailed?: (error: unknown) => void;
}

interface CachedToken {
  token: string;
  refreshAt: number;
  expiresAt: number;
}

/** Spacing of the refreshes after a failed one, while the cached token is still handed out. */
const REFRESH_RETRY = { initialDelayMs: 1_000, maxDelayMs: 30_000 };

export class ClientCredentialsTokenProvider {
  readonly #options: TokenProviderOptions;
  #cached: CachedToken | undefined;
  #pending: Promise<string> | undefined;
  #failures = 0;
  #nextRefreshAt = 0;
  #ahead: NodeJS.Timeout | undefined;

  constructor(options: TokenProviderOptions) {
    this.#options = options;
  }

  /** A valid access token, from the cache or from one shared token request. */
  async getToken(): Promise<string> {
    const cached = this.#cached;
    const now = this.#options.now();
    if (cached && now < cached.refreshAt) return cached.token;
    if (cached && this.#usable(cached, now)) {
      if (now >= this.#nextRefreshAt) this.#refreshInBackground();
      return cached.token;
    }
    return this.#refreshShared();
  }

  /**
   * Drops the token the server refused. Only the token that failed is dropped: when many calls
   * fail with the same token, the first invalidates it and the rest share one new token.
   */
  invalidate(token: string): void {
    if (this.#cached?.token === token) this.#cached = undefined;
  }

  #usable(cached: CachedToken, now: number): boolean {
    const { usableForMs } = this.#options;
    return usableForMs !== undefined && now < cached.expiresAt - usableForMs;
  }

  #refreshShared(): Promise<string> {
    this.#pending ??= this.#refresh().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /** A refresh nobody waits for: its failure schedules the next attempt (#refresh). */
  #refreshInBackground(): void {
    this.#refreshShared().catch((error: unknown) => this.#options.onRefreshFailed?.(error));
  }

  async #refresh(): Promise<string> {
    const requestedAt = this.#options.now();
    let issued: IssuedToken;
    try {
      issued = await this.#options.requestToken();
    } catch (error) {
      this.#failures += 1;
      this.#nextRefreshAt = this.#options.now() + backoffDelay(this.#failures, REFRESH_RETRY);
      this.#scheduleAhead(this.#nextRefreshAt);
      throw error;
    }
    this.#failures = 0;
    this.#options.onToken?.(issued.access_token);
    const lifetimeMs = Math.max(0, issued.expires_in) * 1000;
    const marginMs = Math.min(this.#options.refreshMarginMs, lifetimeMs / 2);
    // Measured from the request, not the answer: the lifetime started when the issuer sent it.
    const expiresAt = requestedAt + lifetimeMs;
    this.#cached = { token: issued.access_token, refreshAt: expiresAt - marginMs, expiresAt };
    this.#scheduleAhead(this.#cached.refreshAt);
    return issued.access_token;
  }

  /** With `refreshAhead`, a refresh at `at`, before the cached token expires. */
  #scheduleAhead(at: number): void {
    const cached = this.#cached;
    clearTimeout(this.#ahead);
    if (!this.#options.refreshAhead || !cached || at >= cached.expiresAt) return;
    // Every refresh schedules anew, so the timer that fires is the latest: the refresh is due.
    this.#ahead = setTimeout(() => this.#refreshInBackground(), at - this.#options.now());
    // A token kept fresh holds no process open.
    this.#ahead.unref();
  }
}
