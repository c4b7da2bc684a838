// Secret values, replaced wherever text may leave the process: an error, a log line, the
// health endpoint, the one line a failing command prints. Redaction by key (pino's paths,
// redactConfig) hides a secret handed over as a field; this catches one quoted in text
// nobody controls: a broker's, a registry's or a service's error message echoing a
// credential, a URL with its password, a stack.

export const REDACTED = '[REDACTED]';

/** Shorter values would be replaced inside ordinary words; none of the secrets is that short. */
const MIN_SECRET_LENGTH = 4;

export class Redactor {
  readonly #secrets = new Set<string>();

  constructor(secrets: Iterable<string | undefined> = []) {
    for (const secret of secrets) this.add(secret);
  }

  add(secret: string | undefined): void {
    if (secret === undefined || secret.length < MIN_SECRET_LENGTH) return;
    this.#secrets.add(secret);
    // As JSON writes it inside a string (a log line): a quote, a backslash or a line break
    // in the secret is escaped there, so the raw value would not be found.
    const escaped = JSON.stringify(secret).slice(1, -1);
    if (escaped !== secret) this.#secrets.add(escaped);
  }

  /** `secret` (and its JSON-escaped form) is no longer one. */
  remove(secret: string): void {
    this.#secrets.delete(secret);
    this.#secrets.delete(JSON.stringify(secret).slice(1, -1));
  }

  redact(text: string): string;
  redact(text: string | undefined): string | undefined;
  redact(text: string | undefined): string | undefined {
    if (text === undefined || this.#secrets.size === 0) return text;
    let clean = text;
    for (const secret of this.#secrets)
      if (clean.includes(secret)) clean = clean.replaceAll(secret, REDACTED);
    return clean;
  }
}

/** Tokens kept redacted: the one in hand, the one before (still in flight), and one more. */
const KEPT_TOKENS = 3;

/**
 * Adds each new token of a refreshing provider to `redactor`, dropping those older than the
 * last few: every token of a long run stayed, and each log line was searched for all of them
 * (about 26 a day with hour-long tokens). An expired token grants nothing.
 */
export function rotatingSecret(redactor: Redactor): (token: string) => void {
  const kept: string[] = [];
  return (token) => {
    redactor.add(token);
    kept.push(token);
    if (kept.length > KEPT_TOKENS) redactor.remove(kept.shift() as string);
  };
}

export const basicCredentials = (user: string, password: string): string =>
  Buffer.from(`${user}:${password}`, 'utf8').toString('base64');

/**
 * The process's secrets: the configuration's credentials, added once it is validated
 * (`registerConfigSecrets`). The logger, the health endpoint and the failure line read it.
 */
export const processSecrets = new Redactor();
