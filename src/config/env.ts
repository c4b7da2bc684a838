// Environment variables as a configuration source: PARTNER_ENRICH_ + the option's path
// in UPPER_SNAKE with `__` between levels. Text is turned into the option's type here,
// guided by the schema; text that does not fit is passed on as is, so that validation
// reports it with the option's path like any other invalid value.
import { decimalNumber } from './decimal.ts';
import { configOptions, ENV_PREFIX, type EnvKind } from './options.ts';
import { renamedEnvVars } from './renamed.ts';
import { setPath, type PlainObject } from './plain-objects.ts';

/** Names the file variable; it is not an option itself. */
export const CONFIG_FILE_ENV_VAR = 'PARTNER_ENRICH_CONFIG';

/** Conventional names that other tools already set (the test infrastructure, compose files, OpenTelemetry). */
export const ENV_SHORTHANDS: Readonly<Record<string, string>> = Object.freeze({
  KAFKA_BROKERS: 'kafka.brokers',
  SCHEMA_REGISTRY_URL: 'schemaRegistry.url',
  OTEL_SERVICE_NAME: 'tracing.serviceName',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'tracing.endpoint',
});

export interface EnvironmentSource {
  input: PlainObject;
  /** Option path -> the variable that set it, to name the culprit in error messages. */
  origins: Map<string, string>;
  /** A variable that names a nested option with `_` where `__` belongs -> that option's variable. */
  meant: Map<string, string>;
}

const optionsByEnvVar = new Map(configOptions.map((option) => [option.envVar, option]));

// PARTNER_ENRICH_REFDATA_TIMEOUT_MS for PARTNER_ENRICH_REFDATA__TIMEOUT_MS is an easy slip,
// and a variable the pipeline ignores leaves the user believing the option is set.
const nestedBySingleUnderscores = new Map(
  configOptions
    .filter((option) => option.envVar.includes('__'))
    .map((option) => [option.envVar.replaceAll('__', '_'), option.envVar]),
);

const TRUE = /^(true|1|yes|on)$/i;
const FALSE = /^(false|0|no|off)$/i;

function fromText(kind: EnvKind, text: string): unknown {
  const trimmed = text.trim();
  switch (kind) {
    case 'integer':
    case 'number':
      return decimalNumber(text, kind === 'integer') ?? text;
    case 'boolean':
    case 'boolean-or-object':
      return TRUE.test(trimmed) ? true : FALSE.test(trimmed) ? false : text;
    case 'list':
      return trimmed
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
    case 'string':
      return text;
  }
}

const camelCase = (upperSnake: string): string =>
  upperSnake.toLowerCase().replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());

/** The path a variable names, whether or not an option lives there. */
const pathOf = (envVar: string): string =>
  envVar.slice(ENV_PREFIX.length).split('__').map(camelCase).join('.');

function optionPathFor(envVar: string): { path: string; kind: EnvKind } | undefined {
  const option = optionsByEnvVar.get(envVar);
  if (option) return { path: option.path, kind: option.envKind };
  const renamedFrom = renamedEnvVars.get(envVar);
  if (renamedFrom) return { path: renamedFrom, kind: 'string' };
  // A `__`, or an option's name with `_` for its `__`, shows the variable means a nested
  // option; passing it on lets the strict schema reject the misspelling. Other
  // PARTNER_ENRICH_* names belong to the local infrastructure scripts (README) and are none
  // of the pipeline's business.
  if (envVar.includes('__') || nestedBySingleUnderscores.has(envVar))
    return { path: pathOf(envVar), kind: 'string' };
  return undefined;
}

export function readEnvironment(env: NodeJS.ProcessEnv): EnvironmentSource {
  const input: PlainObject = {};
  const origins = new Map<string, string>();
  const meant = new Map<string, string>();
  const set = (envVar: string, path: string, kind: EnvKind, text: string) => {
    // Compose files often write `NAME=` for "not set"; only a list can be meaningfully empty.
    if (text.trim() === '' && kind !== 'list') return;
    setPath(input, path.split('.'), fromText(kind, text));
    origins.set(path, envVar);
  };

  for (const [envVar, path] of Object.entries(ENV_SHORTHANDS)) {
    const text = env[envVar];
    const option = configOptions.find((candidate) => candidate.path === path);
    if (text !== undefined && option) set(envVar, path, option.envKind, text);
  }
  // Sorted so that a parent (KAFKA__SSL) is set before its children (KAFKA__SSL__CA), and
  // so that the namespaced names, read after the shorthands, win over them.
  const names = Object.keys(env)
    .filter((name) => name.startsWith(ENV_PREFIX) && name !== CONFIG_FILE_ENV_VAR)
    .sort();
  for (const envVar of names) {
    const text = env[envVar];
    const target = optionPathFor(envVar);
    if (text !== undefined && target) set(envVar, target.path, target.kind, text);
    const option = nestedBySingleUnderscores.get(envVar);
    if (option) meant.set(envVar, option);
  }
  return { input, origins, meant };
}
