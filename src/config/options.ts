// The list of every option, read from the schema itself: the environment variable
// names, the redacted paths and the reference table in docs/CONFIGURATION.md all come
// from here, so none of them can drift from the fields they describe.
import { z } from 'zod';
import { secretFields } from './fields.ts';
import { configSchema } from './schema.ts';

/** How an environment variable's text becomes a value of the option. */
export type EnvKind = 'string' | 'integer' | 'number' | 'boolean' | 'list' | 'boolean-or-object';

export interface OptionInfo {
  /** Dotted path, e.g. `kafka.brokers`. */
  path: string;
  envVar: string;
  envKind: EnvKind;
  /** Human-readable type with its allowed range. */
  type: string;
  hasDefault: boolean;
  defaultValue: unknown;
  description: string;
  secret: boolean;
}

export const ENV_PREFIX = 'PARTNER_ENRICH_';

/** `batching.maxTasks` -> `PARTNER_ENRICH_BATCHING__MAX_TASKS` */
export function envVarFor(path: string): string {
  const upperSnake = (segment: string) => segment.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
  return ENV_PREFIX + path.split('.').map(upperSnake).join('__');
}

interface Unwrapped {
  core: z.core.$ZodType;
  description: string;
  hasDefault: boolean;
  defaultValue: unknown;
  secret: boolean;
}

/** Peels defaults, optionals and transforms off a field, keeping what each layer says about it. */
function unwrap(field: z.core.$ZodType): Unwrapped {
  const found: Unwrapped = {
    core: field,
    description: '',
    hasDefault: false,
    defaultValue: undefined,
    secret: false,
  };
  let current = field;
  for (;;) {
    found.description ||= z.globalRegistry.get(current)?.description ?? '';
    found.secret ||= secretFields.get(current)?.secret === true;
    if (current instanceof z.ZodDefault) {
      found.hasDefault = true;
      found.defaultValue = current.def.defaultValue;
      current = current.def.innerType;
    } else if (current instanceof z.ZodPrefault || current instanceof z.ZodOptional) {
      current = current.def.innerType;
    } else if (current instanceof z.ZodPipe) {
      current = current.def.in;
    } else {
      found.core = current;
      return found;
    }
  }
}

function numberType(schema: z.ZodNumber): string {
  const bounds: string[] = [];
  for (const check of schema.def.checks ?? []) {
    const def = check._zod.def;
    if (def.check === 'greater_than' && 'value' in def && 'inclusive' in def) {
      bounds.push(`${def.inclusive ? '≥' : '>'} ${String(def.value)}`);
    } else if (def.check === 'less_than' && 'value' in def && 'inclusive' in def) {
      bounds.push(`${def.inclusive ? '≤' : '<'} ${String(def.value)}`);
    }
  }
  return [schema.isInt ? 'integer' : 'number', bounds.join(', ')].filter(Boolean).join(' ');
}

function describeType(core: z.core.$ZodType): { type: string; envKind: EnvKind } {
  if (core instanceof z.ZodEnum) {
    return {
      type: `one of ${core.options.map((option) => `\`${String(option)}\``).join(', ')}`,
      envKind: 'string',
    };
  }
  if (core instanceof z.ZodNumber)
    return { type: numberType(core), envKind: core.isInt ? 'integer' : 'number' };
  if (core instanceof z.ZodBoolean) return { type: 'boolean', envKind: 'boolean' };
  if (core instanceof z.ZodArray) return { type: 'list of strings', envKind: 'list' };
  if (core instanceof z.ZodUnion) return { type: 'boolean or object', envKind: 'boolean-or-object' };
  if (core instanceof z.ZodURL) return { type: 'URL', envKind: 'string' };
  return { type: 'string', envKind: 'string' };
}

function collect(field: z.core.$ZodType, path: string, into: OptionInfo[]): void {
  const { core, ...about } = unwrap(field);
  if (core instanceof z.ZodObject) {
    for (const [key, child] of Object.entries(core.shape))
      collect(child, path ? `${path}.${key}` : key, into);
    return;
  }
  into.push({ path, envVar: envVarFor(path), ...describeType(core), ...about });
  // `kafka.ssl: true` or `kafka.ssl: { ca, ... }`: the object's fields are options too.
  if (core instanceof z.ZodUnion) {
    for (const member of core.options) {
      if (member instanceof z.ZodObject) collect(member, path, into);
    }
  }
}

function listOptions(): readonly OptionInfo[] {
  const options: OptionInfo[] = [];
  collect(configSchema, '', options);
  return Object.freeze(options);
}

/** Every leaf option of the configuration, in schema order. */
export const configOptions = listOptions();
