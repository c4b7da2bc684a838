// Keys whose values never reach a log line, wherever they sit in the logged object.
// pino's redaction matches fixed paths (a `*` is one level), so each key is listed at
// every depth down to MAX_DEPTH: deep enough for a logged config (config.kafka.sasl.password)
// or a request (err.details.request.headers.authorization).

export const LOG_CENSOR = '[redacted]';

export const SECRET_LOG_KEYS = [
  'apiKey',
  'api_key',
  'x-api-key',
  'X-Api-Key',
  'X-API-Key',
  'clientSecret',
  'client_secret',
  'secret',
  'password',
  'dataExchangePassword',
  'token',
  'accessToken',
  'access_token',
  'refreshToken',
  'refresh_token',
  'idToken',
  'id_token',
  'authorization',
  'Authorization',
  'proxy-authorization',
  'cookie',
  'Cookie',
  'set-cookie',
] as const;

/** Kafka's TLS private key: `key` alone would also hide Kafka message keys, which are not secrets. */
const SECRET_LOG_PATHS = ['ssl["key"]'] as const;

const MAX_DEPTH = 5;

function atEveryDepth(path: string): string[] {
  return Array.from({ length: MAX_DEPTH + 1 }, (_, depth) => '*.'.repeat(depth) + path);
}

/**
 * A secret key's string member in a written line, at any depth and in any case (JSON text:
 * a quoted name followed by a colon is a member's name, never part of a string). The keys
 * are letters, `-` and `_`: nothing to escape.
 */
const SECRET_MEMBER = new RegExp(`"(${SECRET_LOG_KEYS.join('|')})":"(?:[^"\\\\]|\\\\.)*"`, 'gi');

/**
 * The line with the string values of secret keys censored wherever they sit: pino's paths
 * stop at MAX_DEPTH and match names exactly (`Proxy-Authorization`, `Password` and a
 * password six levels down were written as they came).
 */
export const censorSecretMembers = (line: string): string =>
  line.replace(SECRET_MEMBER, (_member, key: string) => `"${key}":"${LOG_CENSOR}"`);

export const redactedLogPaths: readonly string[] = [
  ...SECRET_LOG_KEYS.flatMap((key) => atEveryDepth(`["${key}"]`)),
  ...SECRET_LOG_PATHS.flatMap(atEveryDepth),
];
