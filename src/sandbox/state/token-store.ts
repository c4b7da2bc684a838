// Access tokens issued by the token endpoint, each valid for tokenLifetimeSeconds on the
// sandbox clock. A token the sandbox never issued, or one past its lifetime, is refused.

import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';

export interface IssuedToken {
  accessToken: string;
  expiresInSeconds: number;
}

export class TokenStore {
  readonly #clock: Clock;
  readonly #lifetimeMs: number;
  readonly #expiresAt = new Map<string, number>();

  constructor(clock: Clock, lifetimeSeconds: number) {
    this.#clock = clock;
    this.#lifetimeMs = lifetimeSeconds * 1000;
  }

  issue(): IssuedToken {
    const now = this.#clock.now();
    // Dropping expired tokens on issue keeps the map as small as the live tokens.
    for (const [token, expiresAt] of this.#expiresAt) if (expiresAt <= now) this.#expiresAt.delete(token);
    const accessToken = randomBytes(24).toString('base64url');
    this.#expiresAt.set(accessToken, now + this.#lifetimeMs);
    return { accessToken, expiresInSeconds: this.#lifetimeMs / 1000 };
  }

  isValid(token: string): boolean {
    const expiresAt = this.#expiresAt.get(token);
    return expiresAt !== undefined && this.#clock.now() < expiresAt;
  }

  clear(): void {
    this.#expiresAt.clear();
  }
}
