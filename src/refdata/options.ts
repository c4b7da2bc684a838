// Options of the reference data client: one schema, the defaults, and the cross-field rules
// that tie each configured root to the credentials it needs. Checked once at construction and
// frozen, so a missing credential fails at start-up rather than on the first call that needs it.

import { setTimeout as delay } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { RefDataConfigError } from './errors.ts';
import type { RootName } from './openapi-document.ts';
import { DEFAULT_RETRY_POLICY, type RetryEnvironment, type RetryPolicy } from './retry-policy.ts';

const secret = z.string().min(1);
const positiveMs = z.number().int().positive();

const optionsSchema = z
  .strictObject({
    /** Root URL per API; only the APIs whose root is given can be called. */
    roots: z.strictObject({
      base: z.url().optional(),
      auth: z.url().optional(),
      dataExchange: z.url().optional(),
      identity: z.url().optional(),
      usage: z.url().optional(),
    } satisfies Record<RootName, z.ZodType>),
    credentials: z
      .strictObject({
        /** Sent as X-API-KEY to the base root; preferred over client credentials there. */
        apiKey: secret.optional(),
        /** OAuth 2.0 client credentials: bearer tokens for the base (without apiKey) and identity roots. */
        clientCredentials: z.strictObject({ clientId: secret, clientSecret: secret }).optional(),
        /** HTTP basic credentials of the data exchange root. */
        dataExchangeBasicAuth: z.strictObject({ username: secret, password: secret }).optional(),
        /** X-Credential-Username for the data exchange, identity and usage roots. */
        credentialUsername: secret.optional(),
      })
      .default({}),
    /** Per attempt, from sending the request to reading the whole body. */
    timeoutMs: positiveMs.default(30_000),
    retry: z
      .strictObject({
        maxAttempts: z.number().int().min(1).optional(),
        baseDelayMs: positiveMs.optional(),
        maxDelayMs: positiveMs.optional(),
        maxRetryAfterMs: z.number().int().min(0).optional(),
      })
      .default({}),
    tokenRefreshMarginMs: z.number().int().min(0).default(30_000),
    /**
     * Told of a token refresh that failed while the token in hand still served: no call fails
     * for it, so without this nobody hears of it until the token is nearly spent.
     */
    onTokenRefreshFailed: z
      .custom<(error: unknown) => void>((value) => typeof value === 'function')
      .optional(),
    dispatcher: z.custom<Dispatcher>((value) => typeof value === 'object' && value !== null).optional(),
    now: z.custom<() => number>((value) => typeof value === 'function').optional(),
    random: z.custom<() => number>((value) => typeof value === 'function').optional(),
    sleep: z.custom<RetryEnvironment['sleep']>((value) => typeof value === 'function').optional(),
  })
  .superRefine(({ roots, credentials }, context) => {
    const require = (root: RootName, present: unknown, what: string): void => {
      if (roots[root] !== undefined && !present) {
        context.addIssue({
          code: 'custom',
          path: ['credentials'],
          message: `the ${root} root needs ${what}`,
        });
      }
    };
    require('base', credentials.apiKey ?? credentials.clientCredentials, 'apiKey or clientCredentials');
    require('dataExchange', credentials.dataExchangeBasicAuth, 'dataExchangeBasicAuth');
    require('dataExchange', credentials.credentialUsername, 'credentialUsername');
    require('identity', credentials.clientCredentials, 'clientCredentials');
    require('identity', credentials.credentialUsername, 'credentialUsername');
    require('usage', credentials.credentialUsername, 'credentialUsername');
    if (credentials.clientCredentials && roots.auth === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['roots', 'auth'],
        message: 'clientCredentials need the auth root',
      });
    }
  });

export type RefDataClientOptions = z.input<typeof optionsSchema>;
type ParsedOptions = z.output<typeof optionsSchema>;

export interface ResolvedClientOptions extends RetryEnvironment {
  roots: Partial<Record<RootName, string>>;
  credentials: ParsedOptions['credentials'];
  timeoutMs: number;
  retry: RetryPolicy;
  tokenRefreshMarginMs: number;
  onTokenRefreshFailed: ((error: unknown) => void) | undefined;
  dispatcher: Dispatcher | undefined;
}

export function resolveClientOptions(options: RefDataClientOptions): Readonly<ResolvedClientOptions> {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    // zod's messages name the path and the rule, never the value, so no secret is echoed.
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || '(options)'}: ${issue.message}`,
    );
    throw new RefDataConfigError(
      'REFDATA_INVALID_OPTIONS',
      `invalid reference data client options: ${problems.join('; ')}`,
      {
        details: { problems },
      },
    );
  }
  const {
    roots,
    credentials,
    timeoutMs,
    retry,
    tokenRefreshMarginMs,
    onTokenRefreshFailed,
    dispatcher,
    now,
    random,
    sleep,
  } = parsed.data;
  const definedRetry = Object.fromEntries(Object.entries(retry).filter(([, value]) => value !== undefined));
  return Object.freeze({
    roots: Object.freeze(Object.fromEntries(Object.entries(roots).filter(([, url]) => url !== undefined))),
    credentials: Object.freeze(credentials),
    timeoutMs,
    retry: Object.freeze({ ...DEFAULT_RETRY_POLICY, ...definedRetry }),
    tokenRefreshMarginMs,
    onTokenRefreshFailed,
    dispatcher,
    now: now ?? Date.now,
    random: random ?? Math.random,
    sleep: sleep ?? ((ms: number, signal?: AbortSignal) => delay(ms, undefined, signal ? { signal } : {})),
  });
}
