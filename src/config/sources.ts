// The configuration sources as layers that can say which of their entries set a path, so
// that an error names the file, the variable or the override that needs fixing.
import { readEnvironment } from './env.ts';
import { readConfigFile } from './file.ts';
import { envVarFor } from './options.ts';
import { hasPath, type PlainObject } from './plain-objects.ts';

export interface Layer {
  input: PlainObject;
  /** The source that set a path, e.g. `file config.yaml`, `environment variable PARTNER_ENRICH_...`. */
  originOf(path: readonly PropertyKey[]): string | undefined;
  /** Names the new option in this source's own terms: a path in a file, a variable in the environment. */
  renamedHint(from: string, to: string): string;
}

function objectLayer(input: PlainObject, label: string): Layer {
  return {
    input,
    originOf: (path) => (hasPath(input, path) ? label : undefined),
    renamedHint: (from, to) => `${from} was renamed to ${to} (in ${label})`,
  };
}

export const fileLayer = (file: string): Layer => objectLayer(readConfigFile(file), `file ${file}`);

export const overridesLayer = (overrides: PlainObject): Layer => objectLayer(overrides, 'command-line flags');

/**
 * The variable that set a path, a path above it (a list's item, kafka.brokers[1], belongs
 * to the variable that set the list) or below it (PARTNER_ENRICH_FOO__BAR made `foo`).
 */
function variableFor(origins: ReadonlyMap<string, string>, path: readonly string[]): string | undefined {
  for (let length = path.length; length > 0; length--) {
    const envVar = origins.get(path.slice(0, length).join('.'));
    if (envVar !== undefined) return envVar;
  }
  const below = `${path.join('.')}.`;
  for (const [setPath, envVar] of origins) if (setPath.startsWith(below)) return envVar;
  return undefined;
}

export function environmentLayer(env: NodeJS.ProcessEnv): Layer {
  const { input, origins, meant } = readEnvironment(env);
  return {
    input,
    originOf: (path) => {
      const envVar = variableFor(origins, path.map(String));
      if (envVar === undefined) return undefined;
      const option = meant.get(envVar);
      return `environment variable ${envVar}${option ? `; levels are separated by __: ${option}` : ''}`;
    },
    renamedHint: (from, to) => `${envVarFor(from)} was renamed to ${envVarFor(to)}`,
  };
}
