// Secrets the client holds (API key, client secret, basic-auth password, the encoded basic
// credentials and every access token it received) are replaced in any text that may reach an
// error, a log or a diagnostics event. Server-supplied text is included: a service that echoes
// a header back in its error message must not leak it through us.

export const REDACTED = '[REDACTED]';

/** Shorter values would be replaced inside ordinary words; none of the secrets is that short. */
const MIN_SECRET_LENGTH = 4;

export class Redactor {
  readonly #secrets = new Set<string>();

  constructor(secrets: Iterable<string | undefined> = []) {
    for (const secret of secrets) this.add(secret);
  }

  add(secret: string | undefined): void {
    if (secret !== undefined && secret.length >= MIN_SECRET_LENGTH) this.#secrets.add(secret);
  }

  redact(text: string): string;
  redact(text: string | undefined): string | undefined;
  redact(text: string | undefined): string | undefined {
    if (text === undefined) return undefined;
    let clean = text;
    for (const secret of this.#secrets) clean = clean.replaceAll(secret, REDACTED);
    return clean;
  }
}

export const basicCredentials = (user: string, password: string): string =>
  Buffer.from(`${user}:${password}`, 'utf8').toString('base64');
