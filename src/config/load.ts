// Builds the one configuration of a run. Sources, lowest precedence first: the schema's
// defaults, a JSON or YAML file, environment variables, the CLI's overrides. Validated
// once, here, and frozen, so that nothing downstream re-checks or mutates it.
import { ZodNumber, type z } from 'zod';
import { decimalNumber } from './decimal.ts';
import { CONFIG_FILE_ENV_VAR } from './env.ts';
import { ConfigError } from './errors.ts';
import { deepFreeze, deepMerge, isPlainObject, type PlainObject } from './plain-objects.ts';
import { configProblems, describeProblems, formatPath } from './problems.ts';
import { findRenamedOptions } from './renamed.ts';
import { configSchema, type Config, type ConfigInput } from './schema.ts';
import { missingCredentials } from './sections/refdata.ts';
import { environmentLayer, fileLayer, overridesLayer, type Layer } from './sources.ts';

export interface LoadConfigOptions {
  /** Path of a JSON or YAML file (`--config`); defaults to $PARTNER_ENRICH_CONFIG. */
  file?: string;
  /** Defaults to process.env; tests pass their own. */
  env?: NodeJS.ProcessEnv;
  /** Values the CLI took from its flags; `undefined` entries leave lower sources alone. */
  overrides?: ConfigInput;
  /** Whether the command calls the reference data service, so needs its credentials (default: yes). */
  serviceCredentials?: boolean;
}

function rejectRenamedOptions(layers: readonly Layer[]): void {
  const renamed = layers.flatMap((layer) =>
    findRenamedOptions(layer.input).map(({ from, to }) => ({
      from,
      to,
      source: layer.originOf(from.split('.')),
      hint: layer.renamedHint(from, to),
    })),
  );
  if (renamed.length === 0) return;
  const lines = renamed.map(({ hint }) => `  - ${hint}`).join('\n');
  throw new ConfigError('CONFIG_OPTION_RENAMED', `Renamed configuration options are in use:\n${lines}`, {
    details: { renamed: renamed.map(({ from, to, source }) => ({ from, to, source })) },
  });
}

/**
 * zod's "expected string, received undefined" means the option is required and was not set.
 * Text where a number belongs is text that is not decimal digits (the environment reads
 * those as numbers): "received string" would not tell the operator that 0x10 or 1e3 is the
 * problem, and the value itself is never quoted.
 */
function issueMessage(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code !== 'invalid_type') return undefined;
  if (issue.input === undefined) return 'required';
  if (issue.expected === 'number' && typeof issue.input === 'string') {
    const integer = issue.inst instanceof ZodNumber && issue.inst.isInt;
    // The environment's decimal digits are numbers by now: digits still text were quoted in a file.
    if (decimalNumber(issue.input, integer) !== undefined)
      return 'Invalid input: expected a number, not text (a number in quotes)';
    return integer
      ? 'Invalid input: expected a whole number in decimal digits, e.g. 1000'
      : 'Invalid input: expected a number in decimal digits, e.g. 0.5';
  }
  return undefined;
}

/** The sources, lowest precedence first (the schema's defaults are not one). */
function configLayers(options: LoadConfigOptions): Layer[] {
  const env = options.env ?? process.env;
  const file = options.file ?? (env[CONFIG_FILE_ENV_VAR] || undefined);
  const layers: Layer[] = [];
  if (file !== undefined) layers.push(fileLayer(file));
  layers.push(environmentLayer(env));
  if (options.overrides) layers.push(overridesLayer(options.overrides));
  return layers;
}

/** Each option a source set (a list counts as one), with the source whose value is in force. */
export function configOrigins(options: LoadConfigOptions = {}): { path: string; source: string }[] {
  const layers = configLayers(options);
  const merged = layers.reduce<PlainObject>((config, layer) => deepMerge(config, layer.input), {});
  const origins: { path: string; source: string }[] = [];
  const walk = (value: unknown, path: string[]): void => {
    if (isPlainObject(value) && Object.keys(value).length > 0) {
      for (const [key, child] of Object.entries(value)) walk(child, [...path, key]);
      return;
    }
    const source = layers.findLast((layer) => layer.originOf(path) !== undefined)?.originOf(path);
    if (source !== undefined) origins.push({ path: formatPath(path), source });
  };
  walk(merged, []);
  return origins.sort((a, b) => a.path.localeCompare(b.path));
}

export function loadConfig(options: LoadConfigOptions = {}): Config {
  const layers = configLayers(options);
  rejectRenamedOptions(layers);
  const merged = layers.reduce<PlainObject>((config, layer) => deepMerge(config, layer.input), {});
  const result = configSchema.safeParse(merged, { error: issueMessage });
  const issues = [
    ...(result.success ? [] : result.error.issues),
    ...(options.serviceCredentials === false ? [] : missingCredentials(merged['refdata'])),
  ];
  if (!result.success || issues.length > 0) {
    const originOf = (path: readonly PropertyKey[]) =>
      layers.findLast((layer) => layer.originOf(path) !== undefined)?.originOf(path);
    // An option missing from a nested section (kafka.sasl.username) was set by nobody: the
    // section exists because a source set another of its options, which is what to fix.
    const sourceOf = (path: readonly PropertyKey[]) => {
      const own = originOf(path);
      if (own !== undefined || path.length < 3) return own;
      const section = path.slice(0, -1);
      const setter = originOf(section);
      return setter && `${setter}, which set ${formatPath(section)}`;
    };
    const problems = configProblems(issues, sourceOf);
    const count = `${problems.length} ${problems.length === 1 ? 'problem' : 'problems'}`;
    throw new ConfigError(
      'CONFIG_INVALID',
      `Invalid configuration (${count}):\n${describeProblems(problems)}`,
      {
        details: { problems },
      },
    );
  }
  return deepFreeze(result.data);
}
