// Options of the sandbox: one schema with the defaults, checked once at start and frozen.
// The modes and the default credentials are in defaults.ts.

import { z } from 'zod';
import { systemClock, type Clock } from './clock.ts';
import { MAX_SANDBOX_ORGS, SANDBOX_DEFAULTS, SANDBOX_MODES } from './defaults.ts';
import { SandboxError } from './errors.ts';
import { faultSettingsSchema, type FaultSettings } from './state/faults.ts';

const text = z.string().min(1);

const optionsSchema = z.strictObject({
  /** 0 picks any free port. */
  port: z.number().int().min(0).max(65_535).default(0),
  host: text.default(SANDBOX_DEFAULTS.host),
  /** Accepted as X-API-KEY on the reference data root. */
  apiKey: text.default(SANDBOX_DEFAULTS.apiKey),
  /** Client credentials of the token endpoint. */
  clientId: text.default(SANDBOX_DEFAULTS.clientId),
  clientSecret: text.default(SANDBOX_DEFAULTS.clientSecret),
  /** HTTP basic credentials of the data exchange root. */
  dataExchange: z
    .strictObject({
      username: text.default(SANDBOX_DEFAULTS.dataExchangeUsername),
      password: text.default(SANDBOX_DEFAULTS.dataExchangePassword),
    })
    .default({
      username: SANDBOX_DEFAULTS.dataExchangeUsername,
      password: SANDBOX_DEFAULTS.dataExchangePassword,
    }),
  /** The organization every X-Credential-Username belongs to (quota defaults and checks). */
  organizationId: text.default(SANDBOX_DEFAULTS.organizationId),
  /** X-Credential-Username values allowed to use `scope=system` on the identity API. */
  administrators: z.array(text).default([SANDBOX_DEFAULTS.administrator]),
  /** Number of organizations in the generated dataset. */
  orgs: z.number().int().min(1).max(MAX_SANDBOX_ORGS).default(10_000),
  /** Seed of the dataset and of every fault decision. */
  seed: z.number().int().min(0).default(1),
  tokenLifetimeSeconds: z.number().int().min(1).default(300),
  clock: z
    .custom<Clock>((value) => typeof (value as Clock | undefined)?.now === 'function')
    .default(systemClock),
  faults: faultSettingsSchema.default(faultSettingsSchema.parse({})),
  /**
   * `realistic`: bulks run in the background and jobs take time; `instant`: bulks and jobs are
   * FINISHED when created (bulk results cached per task content), for pipeline benchmarks.
   */
  mode: z.enum(SANDBOX_MODES).default('realistic'),
  /** Bulk tasks matched per event-loop turn; small enough to keep the server answering meanwhile. */
  bulkTasksPerTurn: z.number().int().min(1).default(20),
  /** Run time of a realistic job per partner of its storage (measured on the clock). */
  jobMsPerPartner: z.number().min(0).default(20),
  /** Largest request body; bulks of many tasks are big. */
  bodyLimitBytes: z
    .number()
    .int()
    .min(1024)
    .default(64 * 1024 * 1024),
  /**
   * Check every API answer against the OpenAPI document before sending it; one that does not
   * fit becomes a 500 INTERNAL_ERROR. Off only to measure its cost or to serve a known-broken body.
   */
  validateResponses: z.boolean().default(true),
  /** Fastify's request log on stdout. */
  logger: z.boolean().default(false),
});

export type SandboxOptions = z.input<typeof optionsSchema>;

export interface ResolvedSandboxOptions extends Omit<z.output<typeof optionsSchema>, 'faults'> {
  faults: FaultSettings;
}

export function resolveSandboxOptions(options: SandboxOptions = {}): Readonly<ResolvedSandboxOptions> {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || '(options)'}: ${issue.message}`,
    );
    throw new SandboxError('SANDBOX_INVALID_OPTIONS', `invalid sandbox options: ${problems.join('; ')}`, {
      details: { problems },
    });
  }
  return Object.freeze(parsed.data);
}
