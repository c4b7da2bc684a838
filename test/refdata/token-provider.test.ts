// The token provider on its own, on the test's clock (vitest's fake timers): when it asks its
// endpoint for a token, and which token it hands out while the endpoint is away. Kafka's
// OAUTHBEARER login uses it with `usableForMs` and `refreshAhead` (src/kafka/sasl.ts), the
// reference data client without them.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ClientCredentialsTokenProvider,
  type TokenProviderOptions,
} from '../../src/refdata/token-provider.ts';

const HOUR_S = 3_600;

/** An endpoint issuing token-1, token-2, ... of an hour; `away` makes it fail. */
function endpoint() {
  const state = { away: false, asked: 0, issued: 0 };
  return {
    state,
    requestToken: async () => {
      state.asked += 1;
      if (state.away) throw new Error('503 temporarily_unavailable');
      state.issued += 1;
      return { access_token: `token-${state.issued}`, expires_in: HOUR_S };
    },
  };
}

function provider(
  requestToken: TokenProviderOptions['requestToken'],
  options: Partial<TokenProviderOptions> = {},
) {
  return new ClientCredentialsTokenProvider({
    requestToken,
    now: () => Date.now(),
    refreshMarginMs: 300_000,
    ...options,
  });
}

/** Lets the endpoint's answers (promises) settle at the current fake time. */
const settled = () => vi.advanceTimersByTimeAsync(0);

describe('ClientCredentialsTokenProvider', () => {
  beforeEach(() => vi.useFakeTimers({ now: 0 }));
  afterEach(() => vi.useRealTimers());

  it('regression: the endpoint away when the token was due failed every caller though the token in hand was good for minutes (kafkajs re-authentications and commits failed); now that token is handed out while it has more than usableForMs left', async () => {
    const { state, requestToken } = endpoint();
    const tokens = provider(requestToken, { usableForMs: 20_000 });
    expect(await tokens.getToken()).toBe('token-1');

    await vi.advanceTimersByTimeAsync((HOUR_S - 300) * 1_000); // due: 5 min left
    state.away = true;
    expect(await tokens.getToken()).toBe('token-1');
    await settled();
    // Asked again after a backoff, not by every caller.
    for (let call = 0; call < 10; call += 1) expect(await tokens.getToken()).toBe('token-1');
    expect(state.asked).toBe(2);

    await vi.advanceTimersByTimeAsync(280_000); // 20 s left: not handed out any more
    await expect(tokens.getToken()).rejects.toThrow('503 temporarily_unavailable');
    state.away = false;
    expect(await tokens.getToken()).toBe('token-2');
  });

  it('with refreshAhead, asks for the next token at the refresh point by itself, and hands it out from then on', async () => {
    const { state, requestToken } = endpoint();
    const tokens = provider(requestToken, { usableForMs: 20_000, refreshAhead: true });
    expect(await tokens.getToken()).toBe('token-1');

    await vi.advanceTimersByTimeAsync((HOUR_S - 300) * 1_000);
    expect(state.issued).toBe(2);
    expect(await tokens.getToken()).toBe('token-2');
    expect(state.asked).toBe(2);
  });

  it('with refreshAhead, asks again after a failure, spaced by its backoff, until a token comes; each failure told to onRefreshFailed', async () => {
    const { state, requestToken } = endpoint();
    const failures: unknown[] = [];
    const tokens = provider(requestToken, {
      usableForMs: 20_000,
      refreshAhead: true,
      onRefreshFailed: (error) => failures.push(error),
    });
    await tokens.getToken();
    state.away = true;

    await vi.advanceTimersByTimeAsync((HOUR_S - 300) * 1_000);
    expect(state.asked).toBe(2);
    await vi.advanceTimersByTimeAsync(120_000);
    const askedWhileAway = state.asked;
    // Backoff from 1 s, doubling up to 30 s: more than one attempt, far fewer than one a second.
    expect(askedWhileAway).toBeGreaterThan(3);
    expect(askedWhileAway).toBeLessThan(15);
    expect(failures).toHaveLength(askedWhileAway - 1);
    expect(await tokens.getToken()).toBe('token-1');

    state.away = false;
    await vi.advanceTimersByTimeAsync(30_000);
    expect(state.issued).toBe(2);
    expect(await tokens.getToken()).toBe('token-2');
  });

  it('without usableForMs, a caller past the refresh point waits for the new token and gets its failure (the reference data client, whose next attempt asks again)', async () => {
    const { state, requestToken } = endpoint();
    const tokens = provider(requestToken);
    await tokens.getToken();

    await vi.advanceTimersByTimeAsync((HOUR_S - 300) * 1_000);
    state.away = true;
    await expect(tokens.getToken()).rejects.toThrow('503 temporarily_unavailable');
    expect(vi.getTimerCount()).toBe(0);
    state.away = false;
    expect(await tokens.getToken()).toBe('token-2');
  });
});
