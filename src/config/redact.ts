// What may be shown of a configuration: `partner-enrich config check` prints it and the
// pipeline logs it at start, so every credential is replaced before it leaves here.
import { configOptions } from './options.ts';
import { isPlainObject } from './plain-objects.ts';
import type { Config } from './schema.ts';

export const REDACTED = '[redacted]';

const secretPaths = new Set(configOptions.filter((option) => option.secret).map((option) => option.path));

/** `https://user:password@host` -> `https://user:[redacted]@host`; credentials also hide in URLs. */
const URL_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*):[^/?#@]*@/i;

/** `text` with the credentials a URL in it may carry replaced: for any URL that is shown. */
export function redactUrl(text: string): string {
  return text.replace(URL_PASSWORD, `$1:${REDACTED}@`);
}

function redact(value: unknown, path: string): unknown {
  if (value === undefined) return undefined;
  if (secretPaths.has(path)) return REDACTED;
  if (typeof value === 'string') return redactUrl(value);
  if (Array.isArray(value)) return value.map((item) => redact(item, path));
  if (isPlainObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, child]) => [key, redact(child, path ? `${path}.${key}` : key)]),
    );
  }
  return value;
}

/** A copy of the configuration with every credential replaced by "[redacted]". */
export function redactConfig(config: Config): unknown {
  return redact(config, '');
}

/** Pretty JSON of the redacted configuration, for `partner-enrich config check`. */
export function describeConfig(config: Config): string {
  return JSON.stringify(redactConfig(config), null, 2);
}
