// JSON Schema validation of the OpenAPI document's schemas, with ajv's JSON Schema 2020-12 (the
// dialect of OpenAPI 3.1). The limits a caller must respect live only in the document; compiling
// them keeps the client and the sandbox server from carrying hand-written checks that drift.
// ajv's strict mode stays on: a keyword it does not know fails the compile, so a misspelt or new
// constraint in the document cannot be skipped silently. OpenAPI's own schema keywords and the
// document's `x-` extensions are declared as annotations for that reason.

import { createRequire } from 'node:module';
import type * as Ajv from 'ajv/dist/2020.js';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import type ajvFormats from 'ajv-formats';
import type { ReferenceDataDocument } from './openapi-document.ts';

export interface SchemaIssue {
  /** Where the value sits, e.g. `body.tasks[0].id` or `query.limit`. */
  field: string;
  keyword: string;
  message: string;
  /** The bound that was broken, when the keyword has one. */
  limit?: number | string;
}

export type Validate = (value: unknown, field: string) => SchemaIssue[];

type Json = Record<string, unknown>;

/** The Schema Object fields OpenAPI adds to JSON Schema (`nullable` ajv knows already). */
const OPENAPI_KEYWORDS = ['discriminator', 'example', 'externalDocs', 'xml'];
/** The document's component schemas, registered under this id as `$defs`. */
const DOCUMENT_ID = 'reference-data';
const COMPONENT_SCHEMAS = '#/components/schemas/';

// ajv and ajv-formats (about 110 modules, 30 ms of CPU) are required when the first compiler is
// made, not when this module is imported: `run` imports the client at start but validates
// nothing before its first bulk (docs/CONTAINER.md, start-up of `run`).
// ajv-formats is CommonJS whose types declare an ES default export: its module.exports carries
// the plugin as `.default`.
const require = createRequire(import.meta.url);
const loadAjv = (): { Ajv2020: typeof Ajv2020; addFormats: typeof ajvFormats.default } => ({
  Ajv2020: (require('ajv/dist/2020.js') as typeof Ajv).Ajv2020,
  addFormats: (require('ajv-formats') as typeof ajvFormats).default,
});

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export class SchemaCompiler {
  readonly #ajv: Ajv2020;
  /** The copy prepared for ajv of each schema object of the document. */
  readonly #prepared = new WeakMap<object, unknown>();

  constructor(document: ReferenceDataDocument) {
    const { Ajv2020, addFormats } = loadAjv();
    this.#ajv = new Ajv2020({
      allErrors: true,
      // Errors carry their schema: a failed anyOf/oneOf needs its branches (see #issuesOf).
      verbose: true,
      strictTypes: false,
      strictTuples: false,
      keywords: [...OPENAPI_KEYWORDS, ...extensionsOf(document.raw)],
    });
    // Ajv2020 forces `unevaluated` on: it tracks which members every branch evaluates, so each
    // anyOf runs all its branches. The document uses no unevaluated* keyword; removing them makes
    // one that appears fail the compile instead of being checked without that tracking.
    this.#ajv.opts.unevaluated = false;
    this.#ajv.removeKeyword('unevaluatedProperties').removeKeyword('unevaluatedItems');
    // Also OpenAPI's formats: int32, int64, float, double and password.
    addFormats(this.#ajv);
    const components = isObject(document.raw.components) ? document.raw.components : {};
    this.#ajv.addSchema({ $defs: this.#prepare(components.schemas ?? {}) }, DOCUMENT_ID);
  }

  /** Compiles `schema` (a schema object of the document, or one referring to it) once. */
  compile(schema: unknown): Validate {
    const validate = this.#ajv.compile(this.#prepare(schema) as Json);
    return (value, field) => (validate(value) ? [] : this.#issuesOf(validate.errors ?? [], value, field));
  }

  /**
   * A copy ajv can compile: `$ref`s point into the registered document, and the document's
   * enumerations spelt as oneOf of consts (one description per value) become the enum they are.
   */
  #prepare(node: unknown): unknown {
    if (typeof node !== 'object' || node === null) return node;
    const known = this.#prepared.get(node);
    if (known !== undefined) return known;
    let copy: unknown;
    if (Array.isArray(node)) {
      copy = node.map((item) => this.#prepare(item));
    } else {
      const entries = Object.entries(node).map(([key, value]) => [key, this.#prepare(value)]);
      const object: Json = Object.fromEntries(entries);
      if (typeof object.$ref === 'string') object.$ref = absoluteRef(object.$ref);
      const { oneOf, ...rest } = object;
      copy =
        Array.isArray(oneOf) && oneOf.every((branch) => isObject(branch) && 'const' in branch)
          ? { ...rest, enum: oneOf.map((branch: Json) => branch.const) }
          : object;
    }
    this.#prepared.set(node, copy);
    return copy;
  }

  #issuesOf(errors: readonly ErrorObject[], value: unknown, field: string): SchemaIssue[] {
    // A failed anyOf/oneOf follows the errors of all its branches; it is reported alone, as the
    // branches' errors describe shapes the value was not meant to have.
    const reported = errors.map(() => true);
    errors.forEach((error, index) => {
      if (error.keyword !== 'anyOf' && error.keyword !== 'oneOf') return;
      const branchErrors = this.#branchErrorCount(error, locate(value, error.instancePath, field).value);
      reported.fill(false, index - branchErrors, index);
    });
    return errors.filter((_error, index) => reported[index]).map((error) => issueOf(error, value, field));
  }

  #branchErrorCount(error: ErrorObject, value: unknown): number {
    let count = 0;
    for (const branch of error.schema as unknown[]) {
      // The branch is part of a compiled schema: ajv returns its cached function.
      const validate: ValidateFunction = this.#ajv.compile(branch as Json);
      if (!validate(value)) count += validate.errors?.length ?? 0;
    }
    return count;
  }
}

const compilers = new WeakMap<ReferenceDataDocument, SchemaCompiler>();

/** One compiler per document, so the request and response validators share compiled schemas. */
export function schemaCompilerFor(document: ReferenceDataDocument): SchemaCompiler {
  let compiler = compilers.get(document);
  if (!compiler) {
    compiler = new SchemaCompiler(document);
    compilers.set(document, compiler);
  }
  return compiler;
}

function absoluteRef(ref: string): string {
  if (!ref.startsWith(COMPONENT_SCHEMAS))
    throw new Error(`unsupported $ref ${ref}: schemas may refer to ${COMPONENT_SCHEMAS} only`);
  return `${DOCUMENT_ID}#/$defs/${ref.slice(COMPONENT_SCHEMAS.length)}`;
}

/** Every `x-` extension name in the document: annotations to ajv. */
function extensionsOf(raw: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(raw)) for (const item of raw) extensionsOf(item, found);
  else if (isObject(raw))
    for (const [key, value] of Object.entries(raw)) {
      if (key.startsWith('x-')) found.add(key);
      extensionsOf(value, found);
    }
  return found;
}

/** The field name (`body.tasks[0].id`) and the value an error's instancePath points at. */
function locate(root: unknown, instancePath: string, field: string): { field: string; value: unknown } {
  let at = field;
  let value = root;
  if (instancePath === '') return { field: at, value };
  for (const escaped of instancePath.slice(1).split('/')) {
    const segment = escaped.replaceAll('~1', '/').replaceAll('~0', '~');
    at += Array.isArray(value) ? `[${segment}]` : `.${segment}`;
    value = (value as Json | undefined)?.[segment];
  }
  return { field: at, value };
}

const show = (value: unknown): string => JSON.stringify(value);

/** The rule a keyword states and its bound, from ajv's error parameters. */
type Rule = (params: Json) => { rule: string; limit?: number | string };
const comparison: Rule = ({ comparison: op, limit }) => ({
  rule: `must be ${String(op)} ${String(limit)}`,
  limit: limit as number,
});
const lengthRule =
  (bound: 'at least' | 'at most', unit: string): Rule =>
  ({ limit }) => ({ rule: `must have ${bound} ${String(limit)} ${unit}`, limit: limit as number });
const RULES: Record<string, Rule> = {
  minimum: comparison,
  maximum: comparison,
  exclusiveMinimum: comparison,
  exclusiveMaximum: comparison,
  minLength: lengthRule('at least', 'characters'),
  maxLength: lengthRule('at most', 'characters'),
  minItems: lengthRule('at least', 'items'),
  maxItems: lengthRule('at most', 'items'),
  type: ({ type }) => ({ rule: `must be of type ${String(type).split(',').join(' or ')}` }),
  enum: ({ allowedValues }) => ({
    rule: `must be one of ${(allowedValues as unknown[]).map(show).join(', ')}`,
  }),
  const: ({ allowedValue }) => ({ rule: `must be ${show(allowedValue)}` }),
  pattern: ({ pattern }) => ({ rule: `must match ${String(pattern)}`, limit: String(pattern) }),
  format: ({ format }) => ({ rule: `must be a ${String(format)}`, limit: String(format) }),
  uniqueItems: () => ({ rule: 'must not contain duplicate items', limit: 'unique' }),
  anyOf: () => ({ rule: 'must match one of the allowed shapes' }),
  oneOf: () => ({ rule: 'must match exactly one of the allowed shapes' }),
};

function issueOf(error: ErrorObject, root: unknown, base: string): SchemaIssue {
  const { keyword, params } = error as ErrorObject<string, Json>;
  const { field } = locate(root, error.instancePath, base);
  // Both name the member at fault rather than the object holding it.
  if (keyword === 'required') {
    const member = `${field}.${String(params.missingProperty)}`;
    return { field: member, keyword, message: `${member} is required` };
  }
  if (keyword === 'additionalProperties') {
    const member = `${field}.${String(params.additionalProperty)}`;
    return { field: member, keyword, message: `${member} is not allowed` };
  }
  const { rule, limit } = RULES[keyword]?.(params) ?? { rule: error.message ?? 'is invalid' };
  const message = `${field} ${rule}`;
  return limit === undefined ? { field, keyword, message } : { field, keyword, message, limit };
}
