// Defaults as the OpenAPI document states them (`default` of a top-level body member or of a
// query parameter), read once per operation, so a changed default in the document changes
// the sandbox with it instead of drifting from a constant copied into a handler.

import { loadReferenceDataDocument } from '../../refdata/index.ts';

export interface OperationDefaults {
  body: Readonly<Record<string, unknown>>;
  query: Readonly<Record<string, unknown>>;
}

const cache = new Map<string, OperationDefaults>();

type SchemaNode = { $ref?: unknown; default?: unknown; properties?: Record<string, unknown> };

export function documentDefaults(operationId: string): OperationDefaults {
  let defaults = cache.get(operationId);
  if (!defaults) {
    defaults = readDefaults(operationId);
    cache.set(operationId, defaults);
  }
  return defaults;
}

function readDefaults(operationId: string): OperationDefaults {
  const document = loadReferenceDataDocument();
  const operation = document.operations.get(operationId);
  if (!operation) throw new RangeError(`unknown operation ${operationId}`);
  const resolve = (schema: unknown): SchemaNode => {
    const node = (schema ?? {}) as SchemaNode;
    return typeof node.$ref === 'string' ? resolve(document.resolveRef(node.$ref)) : node;
  };
  const query: Record<string, unknown> = {};
  for (const parameter of operation.parameters) {
    const value = resolve(parameter.schema).default;
    if (parameter.in === 'query' && value !== undefined) query[parameter.name] = value;
  }
  const body: Record<string, unknown> = {};
  const properties = resolve(operation.requestBody?.schema).properties ?? {};
  for (const [name, schema] of Object.entries(properties)) {
    const value = resolve(schema).default;
    if (value !== undefined) body[name] = value;
  }
  return { body: Object.freeze(body), query: Object.freeze(query) };
}

/** `values` with every member it leaves undefined taken from `defaults`. */
export function withDefaults<Values extends object>(
  values: Values,
  defaults: Readonly<Record<string, unknown>>,
) {
  const merged: Record<string, unknown> = { ...defaults };
  for (const [name, value] of Object.entries(values)) if (value !== undefined) merged[name] = value;
  return merged as Values;
}
