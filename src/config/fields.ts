// Building blocks shared by the configuration sections, so that the same kind of value
// (a duration, a URL, a credential) is checked the same way everywhere.
import { z } from 'zod';

/**
 * Fields holding credentials. Redaction (redactConfig, describeConfig) and the
 * configuration reference read this registry, so marking a field here is all it takes.
 * Look fields up with `get`: zod's `describe()` clones a schema, and only `get` follows
 * a clone back to the schema that was registered.
 */
export const secretFields = z.registry<{ secret: true }>();

export const nonEmptyString = () => z.string().trim().min(1, 'must not be empty');

export const secret = () => nonEmptyString().register(secretFields, { secret: true });

export const httpUrl = () => z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

export const durationMs = (defaultMs: number) => z.number().int().nonnegative().default(defaultMs);

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
