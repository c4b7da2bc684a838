// The sandbox's modes and default credentials, apart from the options schema: the `sandbox`
// command declares its flags with them, and main.ts registers every command at start, so this
// file imports nothing; the sandbox itself is loaded only when a command runs it.
// The credentials default to fixed, documented values so a developer can point the pipeline
// at a sandbox without configuring anything.

export const SANDBOX_MODES = ['realistic', 'instant'] as const;

/** Most organizations a generated dataset holds (the `--orgs` flags take at most this too). */
export const MAX_SANDBOX_ORGS = 1_000_000;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

export const SANDBOX_DEFAULTS = {
  host: '127.0.0.1',
  apiKey: 'sandbox-api-key',
  clientId: 'sandbox-client',
  clientSecret: 'sandbox-client-secret',
  dataExchangeUsername: 'sandbox-exchange',
  dataExchangePassword: 'sandbox-exchange-password',
  organizationId: 'default-org',
  administrator: 'sandbox-admin',
} as const;
