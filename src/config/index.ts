// The configuration module's public surface.
export { configOrigins, loadConfig, type LoadConfigOptions } from './load.ts';
export { configSecrets, describeConfig, redactConfig, redactUrl, REDACTED } from './redact.ts';
export { isPemText } from './fields.ts';
export { ConfigError, CONFIG_ERROR_CODES, type ConfigErrorCode } from './errors.ts';
export { CONFIG_FILE_ENV_VAR, ENV_SHORTHANDS } from './env.ts';
export { configOptions, envVarFor, type OptionInfo } from './options.ts';
export { RENAMED_OPTIONS } from './renamed.ts';
export { renderReferenceTable } from './reference.ts';
export type { Config, ConfigInput } from './schema.ts';
export type { ConfigProblem } from './problems.ts';
