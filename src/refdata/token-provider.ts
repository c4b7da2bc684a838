// OAuth 2.0 client-credentials tokens, cached until shortly before `expires_in` runs out. One
// refresh at a time: concurrent callers that find no valid token wait for the same token
// request instead of each issuing their own.

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
  /** Told about every new token so it can be redacted from errors. */
  onToken?: (token: string) => void;
}

interface CachedToken {
  token: string;
  refreshAt: number;
}

export class ClientCredentialsTokenProvider {
  readonly #options: TokenProviderOptions;
  #cached: CachedToken | undefined;
  #pending: Promise<string> | undefined;

  constructor(options: TokenProviderOptions) {
    this.#options = options;
  }

  /** A valid access token, from the cache or from one shared token request. */
  async getToken(): Promise<string> {
    const cached = this.#cached;
    if (cached && this.#options.now() < cached.refreshAt) return cached.token;
    this.#pending ??= this.#refresh().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /**
   * Drops the token the server refused. Only the token that failed is dropped: when many calls
   * fail with the same token, the first invalidates it and the rest share one new token.
   */
  invalidate(token: string): void {
    if (this.#cached?.token === token) this.#cached = undefined;
  }

  async #refresh(): Promise<string> {
    const requestedAt = this.#options.now();
    const issued = await this.#options.requestToken();
    this.#options.onToken?.(issued.access_token);
    const lifetimeMs = Math.max(0, issued.expires_in) * 1000;
    const marginMs = Math.min(this.#options.refreshMarginMs, lifetimeMs / 2);
    // Measured from the request, not the answer: the lifetime started when the issuer sent it.
    this.#cached = { token: issued.access_token, refreshAt: requestedAt + lifetimeMs - marginMs };
    return issued.access_token;
  }
}
