// THE OLD IMPLEMENTATION, kept only as the baseline of bench/validation/bulk-body.ts: the
// hand-written JSON Schema subset validator that src/refdata/schema-validation.ts (ajv)
// replaced. Nothing in src uses it; do not import it elsewhere. Unchanged from
// src/refdata/json-schema-subset.ts before the switch, apart from this header.
//
// A validator for the JSON Schema subset the OpenAPI document uses. The limits a caller must
// respect (ranges, item counts, enumerations) live only in the document; compiling them here
// keeps the client and the sandbox server from carrying hand-written checks that drift.
// A keyword this subset does not understand fails the compile, so a new constraint in the
// document cannot be skipped silently.

export interface SchemaIssue {
  /** Where the value sits, e.g. `body.tasks[0].id` or `query.limit`. */
  field: string;
  keyword: string;
  message: string;
  /** The bound that was broken, when the keyword has one. */
  limit?: number | string;
}

export type Validate = (value: unknown, field: string) => SchemaIssue[];
export type SchemaObject = Record<string, unknown>;
export type ResolveRef = (ref: string) => unknown;

const ANNOTATIONS = new Set([
  'description',
  'title',
  'summary',
  'default',
  'deprecated',
  'format',
  'examples',
  'readOnly',
  'writeOnly',
]);

const isObject = (value: unknown): value is SchemaObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const TYPE_CHECKS: Record<string, (value: unknown) => boolean> = {
  string: (value) => typeof value === 'string',
  number: (value) => typeof value === 'number' && Number.isFinite(value),
  integer: (value) => Number.isInteger(value),
  boolean: (value) => typeof value === 'boolean',
  null: (value) => value === null,
  array: Array.isArray,
  object: isObject,
};

/** Key order does not matter for uniqueness, so objects are compared in a canonical form. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    isObject(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => a.localeCompare(b)))
      : inner,
  );

const show = (value: unknown): string => JSON.stringify(value);

/** Keywords that compare one measure of the value (the number, or a length) with a bound. */
interface Bound {
  measure: (value: unknown) => number | undefined;
  broken: (measured: number, bound: number) => boolean;
  rule: (bound: number) => string;
}
const numberOf = (value: unknown) => (typeof value === 'number' ? value : undefined);
const lengthOf = (value: unknown) => (typeof value === 'string' ? value.length : undefined);
const countOf = (value: unknown) => (Array.isArray(value) ? value.length : undefined);
const BOUNDS: Record<string, Bound> = {
  minimum: { measure: numberOf, broken: (n, b) => n < b, rule: (b) => `must be >= ${b}` },
  maximum: { measure: numberOf, broken: (n, b) => n > b, rule: (b) => `must be <= ${b}` },
  exclusiveMinimum: { measure: numberOf, broken: (n, b) => n <= b, rule: (b) => `must be > ${b}` },
  exclusiveMaximum: { measure: numberOf, broken: (n, b) => n >= b, rule: (b) => `must be < ${b}` },
  minLength: {
    measure: lengthOf,
    broken: (n, b) => n < b,
    rule: (b) => `must have at least ${b} characters`,
  },
  maxLength: { measure: lengthOf, broken: (n, b) => n > b, rule: (b) => `must have at most ${b} characters` },
  minItems: { measure: countOf, broken: (n, b) => n < b, rule: (b) => `must have at least ${b} items` },
  maxItems: { measure: countOf, broken: (n, b) => n > b, rule: (b) => `must have at most ${b} items` },
};

// The helpers below run for every node of a validated value; a response page holds tens of
// thousands, so they loop and append in place instead of building arrays with flatMap.

/** Appends `found` to `issues` (no spread: a long list would overflow the argument limit). */
function push(issues: SchemaIssue[], found: readonly SchemaIssue[]): void {
  for (const issue of found) issues.push(issue);
}

/** One validator running `checks` in order; a single check needs no wrapper. */
function concatenated(checks: readonly Validate[]): Validate {
  const [only] = checks;
  if (checks.length === 1 && only) return only;
  return (value, field) => {
    const issues: SchemaIssue[] = [];
    for (const check of checks) push(issues, check(value, field));
    return issues;
  };
}

export class SchemaCompiler {
  readonly #resolveRef: ResolveRef;
  readonly #compiledRefs = new Map<string, Validate>();

  constructor(resolveRef: ResolveRef) {
    this.#resolveRef = resolveRef;
  }

  compile(schema: unknown, location = '#'): Validate {
    if (schema === true || (isObject(schema) && Object.keys(schema).length === 0)) return () => [];
    if (!isObject(schema)) throw new Error(`unsupported schema at ${location}`);
    const checks: Validate[] = [];
    for (const [keyword, argument] of Object.entries(schema)) {
      if (ANNOTATIONS.has(keyword) || keyword.startsWith('x-')) continue;
      checks.push(this.#keyword(keyword, argument, schema, `${location}/${keyword}`));
    }
    return concatenated(checks);
  }

  #ref(ref: string): Validate {
    // Registered before compiling so a schema that refers to itself compiles.
    let compiled = this.#compiledRefs.get(ref);
    if (!compiled) {
      let target: Validate = () => [];
      compiled = (value, field) => target(value, field);
      this.#compiledRefs.set(ref, compiled);
      target = this.compile(this.#resolveRef(ref), ref);
    }
    return compiled;
  }

  #keyword(keyword: string, arg: unknown, schema: SchemaObject, location: string): Validate {
    const issue = (field: string, message: string, limit?: number | string): SchemaIssue[] => [
      limit === undefined ? { field, keyword, message } : { field, keyword, message, limit },
    ];
    const bound = BOUNDS[keyword];
    if (bound) {
      if (typeof arg !== 'number') throw new Error(`${location} must be a number`);
      return (value, field) => {
        const measured = bound.measure(value);
        return measured !== undefined && bound.broken(measured, arg)
          ? issue(field, `${field} ${bound.rule(arg)}`, arg)
          : [];
      };
    }
    switch (keyword) {
      case '$ref':
        if (typeof arg !== 'string') throw new Error(`${location} must be a string`);
        return this.#ref(arg);
      case 'type': {
        const types = Array.isArray(arg) ? arg.map(String) : [String(arg)];
        for (const type of types)
          if (!TYPE_CHECKS[type]) throw new Error(`unknown type ${type} at ${location}`);
        return (value, field) =>
          types.some((type) => TYPE_CHECKS[type]?.(value))
            ? []
            : issue(field, `${field} must be of type ${types.join(' or ')}`);
      }
      case 'enum': {
        if (!Array.isArray(arg)) throw new Error(`${location} must be an array`);
        return (value, field) =>
          arg.includes(value) ? [] : issue(field, `${field} must be one of ${arg.map(show).join(', ')}`);
      }
      case 'const':
        return (value, field) => (value === arg ? [] : issue(field, `${field} must be ${show(arg)}`));
      case 'pattern': {
        const pattern = new RegExp(String(arg), 'u');
        return (value, field) =>
          typeof value === 'string' && !pattern.test(value)
            ? issue(field, `${field} must match ${String(arg)}`, String(arg))
            : [];
      }
      case 'uniqueItems':
        return (value, field) =>
          arg === true && Array.isArray(value) && new Set(value.map(canonical)).size !== value.length
            ? issue(field, `${field} must not contain duplicate items`, 'unique')
            : [];
      case 'items': {
        const validateItem = this.compile(arg, location);
        return (value, field) => {
          if (!Array.isArray(value)) return [];
          const issues: SchemaIssue[] = [];
          for (let index = 0; index < value.length; index++)
            push(issues, validateItem(value[index], `${field}[${index}]`));
          return issues;
        };
      }
      case 'required': {
        if (!Array.isArray(arg)) throw new Error(`${location} must be an array`);
        const names = arg.map(String);
        return (value, field) =>
          isObject(value)
            ? names
                .filter((name) => value[name] === undefined)
                .flatMap((name) => issue(`${field}.${name}`, `${field}.${name} is required`))
            : [];
      }
      case 'properties': {
        if (!isObject(arg)) throw new Error(`${location} must be an object`);
        const properties = Object.entries(arg).map(
          ([name, propertySchema]) => [name, this.compile(propertySchema, `${location}/${name}`)] as const,
        );
        return (value, field) => {
          if (!isObject(value)) return [];
          const issues: SchemaIssue[] = [];
          for (const [name, validate] of properties) {
            const member = value[name];
            if (member !== undefined) push(issues, validate(member, `${field}.${name}`));
          }
          return issues;
        };
      }
      case 'additionalProperties': {
        // Any extra member allowed: nothing to walk (most open objects of the document).
        if (arg === true || (isObject(arg) && Object.keys(arg).length === 0)) return () => [];
        const known = new Set(isObject(schema.properties) ? Object.keys(schema.properties) : []);
        const validateExtra =
          arg === false
            ? (_value: unknown, field: string) => issue(field, `${field} is not allowed`)
            : this.compile(arg, location);
        return (value, field) =>
          isObject(value)
            ? Object.entries(value)
                .filter(([name]) => !known.has(name))
                .flatMap(([name, extra]) => validateExtra(extra, `${field}.${name}`))
            : [];
      }
      case 'allOf':
        return this.#combination(arg, location, (results) => results.flat());
      case 'anyOf':
        return this.#combination(arg, location, (results, field) =>
          results.some((found) => found.length === 0)
            ? []
            : issue(field, `${field} must match one of the allowed shapes`),
        );
      case 'oneOf':
        return this.#oneOf(arg, location, issue);
      default:
        throw new Error(`unsupported JSON Schema keyword ${keyword} at ${location}`);
    }
  }

  #combination(
    arg: unknown,
    location: string,
    combine: (results: SchemaIssue[][], field: string) => SchemaIssue[],
  ): Validate {
    if (!Array.isArray(arg)) throw new Error(`${location} must be an array`);
    const branches = arg.map((branch, index) => this.compile(branch, `${location}/${index}`));
    return (value, field) =>
      combine(
        branches.map((validate) => validate(value, field)),
        field,
      );
  }

  #oneOf(arg: unknown, location: string, issue: (field: string, message: string) => SchemaIssue[]): Validate {
    if (!Array.isArray(arg)) throw new Error(`${location} must be an array`);
    // The document spells documented enumerations as oneOf of consts (one description and one
    // deprecation flag per value); report those like an enum.
    if (arg.every((branch) => isObject(branch) && 'const' in branch)) {
      const allowed = arg.map((branch: SchemaObject) => branch.const);
      return (value, field) =>
        allowed.includes(value)
          ? []
          : [{ field, keyword: 'enum', message: `${field} must be one of ${allowed.map(show).join(', ')}` }];
    }
    return this.#combination(arg, location, (results, field) =>
      results.filter((found) => found.length === 0).length === 1
        ? []
        : issue(field, `${field} must match exactly one of the allowed shapes`),
    );
  }
}
