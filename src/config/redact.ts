// What may be shown of a configuration: `partner-enrich config check` prints it and the
// pipeline logs it at start, so every credential is replaced before it leaves here.
import { SECRET_LOG_KEYS } from '../observability/log-redaction.ts';
import { basicCredentials } from '../observability/secret-redactor.ts';
import { configOptions } from './options.ts';
import { isPlainObject } from './plain-objects.ts';
import type { Config } from './schema.ts';

export const REDACTED = '[redacted]';

const secretPaths = new Set(configOptions.filter((option) => option.secret).map((option) => option.path));

const SECRET_PARAMETERS = new Set(SECRET_LOG_KEYS.map((key) => key.toLowerCase()));

/** Query parameters (`name=value`) named like a credential, in text that is not a URL. */
const SECRET_PARAMETER_TEXT = new RegExp(`([?&](?:${[...SECRET_PARAMETERS].join('|')})=)[^&#\\s]*`, 'gi');

/**
 * Everything between `scheme://` and the last `@` before the next blank, in text that is not a
 * URL: more than the userinfo when a path holds an `@` too, never less.
 */
const USERINFO_TEXT = /([a-z][a-z0-9+.-]*:\/\/)\S*@/gi;

const isSecretParameter = (parameter: string): boolean => {
  const [name] = new URLSearchParams(parameter).keys();
  return name !== undefined && SECRET_PARAMETERS.has(name.toLowerCase());
};

function redactQuery(search: string): string {
  return search
    .slice(1)
    .split('&')
    .map((parameter) => {
      const equals = parameter.indexOf('=');
      return equals > 0 && isSecretParameter(parameter)
        ? `${parameter.slice(0, equals)}=${REDACTED}`
        : parameter;
    })
    .join('&');
}

/**
 * `url` with its credentials replaced: a password (`https://user:[redacted]@host`), a user
 * name standing alone, which is often a token (`https://[redacted]@host`), and the values of
 * query parameters the logger censors too (`?api_key=[redacted]`). Text that is not a URL has
 * every userinfo and such parameter of the URLs in it replaced. Anything else is returned as
 * it came; a URL with credentials comes back as the URL parser writes it.
 */
export function redactUrl(url: string): string {
  const parsed = URL.parse(url);
  if (parsed === null)
    return url.replace(USERINFO_TEXT, `$1${REDACTED}@`).replace(SECRET_PARAMETER_TEXT, `$1${REDACTED}`);
  const query = parsed.search === '' ? '' : `?${redactQuery(parsed.search)}`;
  const hasUserinfo = parsed.username !== '' || parsed.password !== '';
  if (!hasUserinfo && query === parsed.search) return url;
  const userinfo =
    parsed.password !== '' ? `${parsed.username}:${REDACTED}@` : hasUserinfo ? `${REDACTED}@` : '';
  const slashes = parsed.href.startsWith(`${parsed.protocol}//`) ? '//' : '';
  return `${parsed.protocol}${slashes}${userinfo}${parsed.host}${parsed.pathname}${query}${parsed.hash}`;
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

/**
 * The credentials' values, for redaction wherever text leaves the process: every secret
 * option's, the schema registry's Basic credentials as its Authorization header carries them,
 * and the user name and password of every URL (a registry's `https://user:pass@host`).
 */
export function configSecrets(config: Config): string[] {
  const found: string[] = [];
  const walk = (value: unknown, path: string): void => {
    if (secretPaths.has(path) && typeof value === 'string') found.push(value);
    else if (typeof value === 'string') {
      const url = URL.parse(value);
      if (url?.password) found.push(decodeURIComponent(url.password), url.password);
      else if (url?.username) found.push(decodeURIComponent(url.username), url.username);
    } else if (Array.isArray(value)) for (const item of value) walk(item, path);
    else if (isPlainObject(value))
      for (const [key, child] of Object.entries(value)) walk(child, path ? `${path}.${key}` : key);
  };
  walk(config, '');
  const { username, password } = config.schemaRegistry;
  if (username !== undefined && password !== undefined) found.push(basicCredentials(username, password));
  return found;
}

/** A copy of the configuration with every credential replaced by "[redacted]". */
export function redactConfig(config: Config): unknown {
  return redact(config, '');
}

/** Pretty JSON of the redacted configuration, for `partner-enrich config check`. */
export function describeConfig(config: Config): string {
  return JSON.stringify(redactConfig(config), null, 2);
}
