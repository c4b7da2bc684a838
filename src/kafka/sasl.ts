// kafkajs's SASL options from `kafka.sasl`: plain and scram-* as configured; OAUTHBEARER with
// tokens of the OAuth 2.0 client credentials grant (RFC 6749 4.4), asked for as Kafka's own Java
// login handler asks (HTTP Basic client authentication, a form with grant_type and scope) and
// refreshed ahead of their expiry.
// kafkajs authenticates a connection again 10 s before its session ends, and the broker ends
// an OAUTHBEARER session when its token expires: a token handed out with less than 10 s left
// would start the next authentication at once, which the broker refuses (ILLEGAL_SASL_STATE).
// kafkajs asks for a token only then, so the next token is fetched ahead, by a timer, as
// Kafka's Java login refreshes in a thread of its own: an endpoint away at that moment
// (re-authentications failing, commits failing, warnings) is met ahead of it and asked again
// while the current token still serves.
import type { SASLOptions } from 'kafkajs';
import type { Logger } from '../observability/logger.ts';
import { redactUrl, type Config } from '../config/index.ts';
import { basicCredentials, processSecrets, rotatingSecret } from '../observability/secret-redactor.ts';
import { ClientCredentialsTokenProvider, type IssuedToken } from '../refdata/token-provider.ts';
import { backoffDelay } from '../retry/backoff.ts';
import { KafkaError } from './errors.ts';

type KafkaSettings = Config['kafka'];

interface OAuthBearerSettings {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string | undefined;
  /** `key=value` each. */
  extensions: string[];
}

/**
 * Fetched again this long before expiry (Kafka's Java login: sasl.login.refresh.buffer.seconds),
 * or half-way through a shorter life.
 */
const REFRESH_MARGIN_MS = 300_000;
/** kafkajs's re-authentication threshold (10 s), and as much again for the connection's handshake. */
const USABLE_FOR_MS = 20_000;
const TOKEN_REQUEST_TIMEOUT_MS = 10_000;
/** An endpoint away or failing (no answer, 5xx, 429) is asked this many times before the connection fails. */
const TOKEN_REQUEST_ATTEMPTS = 4;
const TOKEN_RETRY = { initialDelayMs: 500, maxDelayMs: 4_000 };
/** A token whose life its endpoint does not say (no expires_in, not a JWT with exp). */
const UNSTATED_LIFETIME_S = 300;

/** One token provider per configuration: the start's probe and the clients share its tokens. */
const oauthBearerOf = new WeakMap<NonNullable<KafkaSettings['sasl']>, SASLOptions>();

/**
 * kafkajs's SASL options of `kafka.sasl`. `logger` hears of OAUTHBEARER tokens not fetched ahead
 * (the first caller's, for the configuration's one token provider).
 */
export function saslOptions(sasl: NonNullable<KafkaSettings['sasl']>, logger?: Logger): SASLOptions {
  if (sasl.mechanism !== 'oauthbearer') {
    // Validated: plain and scram-* come with both.
    const { mechanism, username = '', password = '' } = sasl;
    return { mechanism, username, password };
  }
  let options = oauthBearerOf.get(sasl);
  if (!options) {
    const { tokenUrl = '', clientId = '', clientSecret = '', scope, extensions } = sasl;
    options = oauthBearerSasl({ tokenUrl, clientId, clientSecret, scope, extensions }, logger);
    oauthBearerOf.set(sasl, options);
  }
  // A copy: kafkajs stores its authentication provider on the object it is given.
  return { ...options };
}

/** kafkajs's SASL options: every connection's authentication takes the current token. */
function oauthBearerSasl(
  settings: OAuthBearerSettings,
  logger: Logger | undefined,
  now: () => number = Date.now,
): SASLOptions {
  const client = basicCredentials(formEncode(settings.clientId), formEncode(settings.clientSecret));
  processSecrets.add(client);
  const tokens = new ClientCredentialsTokenProvider({
    requestToken: () => requestToken(settings, `Basic ${client}`, now),
    now,
    refreshMarginMs: REFRESH_MARGIN_MS,
    usableForMs: USABLE_FOR_MS,
    refreshAhead: true,
    onRefreshFailed: (error) =>
      logger?.warn(
        { tokenUrl: redactUrl(settings.tokenUrl), clientId: settings.clientId },
        `OAuth token not fetched ahead, asked again after a backoff; the one in hand serves meanwhile: ${(error as Error).message}`,
      ),
    onToken: rotatingSecret(processSecrets),
  });
  const extensions =
    settings.extensions.length === 0
      ? undefined
      : Object.fromEntries(settings.extensions.map((entry) => entry.split(/=(.*)/s, 2)));
  return {
    mechanism: 'oauthbearer',
    oauthBearerProvider: async () => ({
      value: await tokens.getToken(),
      ...(extensions ? { extensions } : {}),
    }),
  };
}

/** RFC 6749 2.3.1: the client id and secret are form-encoded before they are joined for Basic. */
const formEncode = (text: string): string => new URLSearchParams({ v: text }).toString().slice(2);

async function requestToken(
  settings: OAuthBearerSettings,
  authorization: string,
  now: () => number,
): Promise<IssuedToken> {
  const { tokenUrl, clientId, scope } = settings;
  // Said as configured, but a password or secret query parameter in it (config check shows it so).
  const shown = redactUrl(tokenUrl);
  const body = new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) });
  for (let attempt = 1; ; attempt += 1) {
    let failure: string;
    try {
      const response = await fetch(tokenUrl, {
        method: 'POST',
        headers: {
          authorization,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body,
        signal: AbortSignal.timeout(TOKEN_REQUEST_TIMEOUT_MS),
      });
      const text = await response.text();
      if (response.ok) return issuedToken(text, shown, now);
      failure = `${response.status} ${oauthError(text)}`;
      // Refused: another attempt with the same credentials gets the same answer.
      if (response.status < 500 && response.status !== 429)
        throw new KafkaError(
          'KAFKA_AUTHENTICATION_FAILED',
          `the OAuth token endpoint ${shown} refused client ${clientId}: ${failure}: check kafka.sasl`,
        );
    } catch (error) {
      if (error instanceof KafkaError) throw error;
      failure = (error as Error).message.replaceAll(tokenUrl, shown);
    }
    if (attempt >= TOKEN_REQUEST_ATTEMPTS)
      throw new KafkaError(
        'KAFKA_UNAVAILABLE',
        `the OAuth token endpoint ${shown} gave no token for client ${clientId} in ${attempt} attempts: ${failure}`,
      );
    await new Promise((resolve) => setTimeout(resolve, backoffDelay(attempt, TOKEN_RETRY)));
  }
}

/** The endpoint's `error` and `error_description` (RFC 6749 5.2), or the start of what it said. */
function oauthError(text: string): string {
  try {
    const { error, error_description: description } = JSON.parse(text) as Record<string, unknown>;
    if (typeof error === 'string')
      return typeof description === 'string' ? `${error}: ${description}` : error;
  } catch {
    // Not JSON: said below as it is.
  }
  return text.slice(0, 200);
}

/** `tokenUrl` as it is shown: redacted. */
function issuedToken(text: string, tokenUrl: string, now: () => number): IssuedToken {
  let answer: Record<string, unknown>;
  try {
    answer = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new KafkaError(
      'KAFKA_AUTHENTICATION_FAILED',
      `the OAuth token endpoint ${tokenUrl} answered no JSON`,
    );
  }
  const { access_token: token, expires_in: expiresIn } = answer;
  if (typeof token !== 'string' || token === '')
    throw new KafkaError(
      'KAFKA_AUTHENTICATION_FAILED',
      `the OAuth token endpoint ${tokenUrl} answered no access_token`,
    );
  const seconds =
    typeof expiresIn === 'number' ? expiresIn : (secondsToJwtExpiry(token, now) ?? UNSTATED_LIFETIME_S);
  return { access_token: token, expires_in: seconds };
}

/** Seconds until a JWT's `exp`, undefined for a token that is not one or has none. */
function secondsToJwtExpiry(token: string, now: () => number): number | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const { exp } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof exp === 'number' ? exp - now() / 1000 : undefined;
  } catch {
    return undefined;
  }
}
