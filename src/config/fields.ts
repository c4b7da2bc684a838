// Building blocks shared by the configuration sections, so that the same kind of value
// (a duration, a URL, a credential) is checked the same way everywhere.
import { accessSync, constants, statSync } from 'node:fs';
import { z } from 'zod';
import { MAX_TIMER_MS } from '../timer-limit.ts';

/**
 * Fields holding credentials. Redaction (redactConfig, describeConfig) and the
 * configuration reference read this registry, so marking a field here is all it takes.
 * Look fields up with `get`: zod's `describe()` clones a schema, and only `get` follows
 * a clone back to the schema that was registered.
 */
export const secretFields = z.registry<{ secret: true }>();

export const nonEmptyString = () => z.string().trim().min(1, 'must not be empty');

export const secret = () => nonEmptyString().register(secretFields, { secret: true });

/** Inline PEM text starts with a `-----BEGIN ...-----` line; anything else names a file. */
export const isPemText = (value: string): boolean => value.includes('-----BEGIN');

const isReadableFile = (path: string): boolean => {
  try {
    accessSync(path, constants.R_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

/**
 * PEM text, or the path of a file holding it, checked here: a mistyped path would otherwise
 * reach the TLS stack as if it were the PEM text itself and fail later as a decoder error.
 */
export const pemOrFile = () =>
  nonEmptyString().refine((value) => isPemText(value) || isReadableFile(value), {
    message: 'must be PEM text (-----BEGIN ...) or the path of a readable file',
  });

export const httpUrl = () => z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

// At most what Node's timers wait: a longer duration fired after 1 ms (a 2^31 ms request
// time-out timed every request out at once), and `config check` took it.
export const durationMs = (defaultMs: number) =>
  z.number().int().nonnegative().max(MAX_TIMER_MS).default(defaultMs);

export const positiveMs = (defaultMs: number) =>
  z.number().int().positive().max(MAX_TIMER_MS).default(defaultMs);

export const positiveInt = (defaultValue: number) => z.number().int().positive().default(defaultValue);

export const ratio = (defaultValue: number) => z.number().min(0).max(1).default(defaultValue);

/** Backoff sections hold a start and a cap; a start above the cap would make the cap meaningless. */
export function startNotAboveCap<Start extends string, Cap extends string>(startKey: Start, capKey: Cap) {
  return (section: Record<Start | Cap, number>, ctx: z.RefinementCtx): void => {
    if (section[startKey] > section[capKey]) {
      ctx.addIssue({
        code: 'custom',
        path: [startKey],
        message: `must not exceed ${capKey} (${section[capKey]})`,
      });
    }
  };
}
