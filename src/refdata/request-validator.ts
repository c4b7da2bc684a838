// Request validation compiled from the OpenAPI document: the client runs it before sending, so
// a caller learns about a broken limit without spending a request, and the sandbox server runs
// the same validator on what it receives, answering 400 with the field and the limit.

import { RefDataRequestValidationError } from './errors.ts';
import {
  schemaCompilerFor,
  type SchemaCompiler,
  type SchemaIssue,
  type Validate,
} from './schema-validation.ts';
import {
  loadReferenceDataDocument,
  type OperationDescriptor,
  type ParameterDescriptor,
  type ReferenceDataDocument,
} from './openapi-document.ts';

export type { SchemaIssue } from './schema-validation.ts';

export interface RequestParts {
  path?: Record<string, unknown>;
  query?: Record<string, unknown>;
  /** Header names are matched case-insensitively. */
  headers?: Record<string, unknown>;
  body?: unknown;
}

export interface RequestValidationOptions {
  /**
   * Convert path, query and header strings to the parameter's schema type first ("5" to 5,
   * "true" to true, a single value to a one-item array), as a server receiving a URL needs.
   */
  coerceParameters?: boolean;
}

export interface RequestValidationResult {
  valid: boolean;
  issues: SchemaIssue[];
  /** The parts as validated: coerced when asked, header names in lower case. */
  parts: RequestParts;
}

type Location = ParameterDescriptor['in'];
const PART_OF: Record<Location, 'path' | 'query' | 'headers'> = {
  path: 'path',
  query: 'query',
  header: 'headers',
};
const FIELD_PREFIX: Record<Location, string> = { path: 'path', query: 'query', header: 'header' };

interface CompiledParameter {
  descriptor: ParameterDescriptor;
  key: string;
  validate: Validate;
  schemaType: unknown;
  itemType: unknown;
}

interface CompiledOperation {
  parameters: CompiledParameter[];
  body?: { required: boolean; validate: Validate };
}

export class RequestValidator {
  readonly #document: ReferenceDataDocument;
  /**
   * Each operation compiled at its first validation, then kept: a process calls few of the
   * document's operations, and compiling all of them took 0.2-0.4 s of every start of `run`.
   * An unknown schema keyword still fails the compile, at the operation's first request.
   */
  readonly #operations = new Map<string, CompiledOperation>();

  constructor(document: ReferenceDataDocument = loadReferenceDataDocument()) {
    this.#document = document;
  }

  get operationIds(): string[] {
    return [...this.#document.operations.keys()];
  }

  validate(
    operationId: string,
    parts: RequestParts,
    options: RequestValidationOptions = {},
  ): RequestValidationResult {
    const operation = this.#compiled(operationId);
    const validated: RequestParts = {
      path: { ...parts.path },
      query: { ...parts.query },
      headers: Object.fromEntries(
        Object.entries(parts.headers ?? {}).map(([name, v]) => [name.toLowerCase(), v]),
      ),
    };
    const issues: SchemaIssue[] = [];
    for (const parameter of operation.parameters) {
      const { descriptor, key } = parameter;
      const values = validated[PART_OF[descriptor.in]] ?? {};
      const field = `${FIELD_PREFIX[descriptor.in]}.${key}`;
      let value = values[key];
      if (value === undefined) {
        if (descriptor.required) issues.push({ field, keyword: 'required', message: `${field} is required` });
        continue;
      }
      if (options.coerceParameters) value = values[key] = coerce(value, parameter);
      issues.push(...parameter.validate(value, field));
    }
    if (operation.body) {
      validated.body = parts.body;
      if (parts.body === undefined) {
        if (operation.body.required)
          issues.push({ field: 'body', keyword: 'required', message: 'body is required' });
      } else {
        issues.push(...operation.body.validate(parts.body, 'body'));
      }
    }
    return { valid: issues.length === 0, issues, parts: validated };
  }

  /** Throws RefDataRequestValidationError (code REFDATA_INVALID_REQUEST) listing every issue. */
  assertValid(operationId: string, parts: RequestParts): void {
    const { issues } = this.validate(operationId, parts);
    if (issues.length > 0) throw new RefDataRequestValidationError(operationId, issues);
  }

  #compiled(operationId: string): CompiledOperation {
    const known = this.#operations.get(operationId);
    if (known) return known;
    const descriptor = this.#document.operations.get(operationId);
    if (!descriptor) throw new RangeError(`unknown operation ${operationId}`);
    const compiled = compileOperation(descriptor, schemaCompilerFor(this.#document), (schema) =>
      this.#typeOf(schema),
    );
    this.#operations.set(operationId, compiled);
    return compiled;
  }

  #typeOf(schema: unknown): unknown {
    const node = schema as { $ref?: unknown; type?: unknown } | undefined;
    return typeof node?.$ref === 'string' ? this.#typeOf(this.#document.resolveRef(node.$ref)) : node?.type;
  }
}

let shared: RequestValidator | undefined;

/** One validator per process over this repository's document. */
export function getRequestValidator(): RequestValidator {
  shared ??= new RequestValidator();
  return shared;
}

function compileOperation(
  operation: OperationDescriptor,
  compiler: SchemaCompiler,
  typeOf: (schema: unknown) => unknown,
): CompiledOperation {
  const parameters = operation.parameters.map((descriptor): CompiledParameter => {
    const items = (descriptor.schema as { items?: unknown }).items;
    return {
      descriptor,
      key: descriptor.in === 'header' ? descriptor.name.toLowerCase() : descriptor.name,
      validate: compiler.compile(descriptor.schema),
      schemaType: typeOf(descriptor.schema),
      itemType: typeOf(items),
    };
  });
  const body = operation.requestBody && {
    required: operation.requestBody.required,
    validate: compiler.compile(operation.requestBody.schema),
  };
  return body ? { parameters, body } : { parameters };
}

function coerce(value: unknown, parameter: CompiledParameter): unknown {
  if (parameter.schemaType === 'array') {
    const list = Array.isArray(value) ? value : [value];
    return list.map((item) => coerceScalar(item, parameter.itemType));
  }
  return coerceScalar(value, parameter.schemaType);
}

/** Leaves a string that does not convert as it is, so the type check reports it. */
function coerceScalar(value: unknown, type: unknown): unknown {
  if (typeof value !== 'string') return value;
  if ((type === 'integer' || type === 'number') && value.trim() !== '' && Number.isFinite(Number(value))) {
    return Number(value);
  }
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}
