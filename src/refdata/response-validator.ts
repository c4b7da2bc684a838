// Response validation compiled from the OpenAPI document, with the request validator's schema
// compiler (the same instance, so schemas both use are compiled once): the sandbox runs it on every answer before sending it, so a sandbox body that
// drifts from the document fails loudly instead of teaching the client a shape the real
// service does not promise. Issues name the field under `response` (e.g.
// `response.results[0].taskId`), never the value, so they are safe to log.

import { schemaCompilerFor, type SchemaIssue, type Validate } from './schema-validation.ts';
import { loadReferenceDataDocument, type ReferenceDataDocument } from './openapi-document.ts';

export interface ResponseValidationResult {
  valid: boolean;
  issues: SchemaIssue[];
}

export interface ResponseValidatorOptions {
  /**
   * The body any error status may carry even where the operation does not document that
   * status (the spec leaves most status codes "not shown", e.g. 401 for missing credentials).
   */
  errorBodyRef?: string;
}

/** The document's answer for one documented status key; `undefined`: no JSON body to check. */
type CompiledResponses = ReadonlyMap<string, Validate | undefined>;

const FIELD = 'response';
const DEFAULT_ERROR_BODY_REF = '#/components/schemas/ErrorBody';

export class ResponseValidator {
  readonly #operations = new Map<string, CompiledResponses>();
  readonly #errorBody: Validate;

  /** Compiles every documented response once, at construction, so an unknown keyword fails at start-up. */
  constructor(
    document: ReferenceDataDocument = loadReferenceDataDocument(),
    options: ResponseValidatorOptions = {},
  ) {
    const compiler = schemaCompilerFor(document);
    for (const operation of document.operations.values()) {
      const responses = new Map<string, Validate | undefined>();
      for (const { status, schema } of operation.responses) {
        responses.set(status, schema === undefined ? undefined : compiler.compile(schema));
      }
      this.#operations.set(operation.operationId, responses);
    }
    const errorBodyRef = options.errorBodyRef ?? DEFAULT_ERROR_BODY_REF;
    this.#errorBody = compiler.compile({ $ref: errorBodyRef });
  }

  get operationIds(): string[] {
    return [...this.#operations.keys()];
  }

  /**
   * Checks `body` (the value before JSON serialisation) against the response the document
   * gives for `status`: the exact code, else its range (`5XX`), else `default`.
   */
  validate(operationId: string, status: number, body: unknown): ResponseValidationResult {
    const responses = this.#operations.get(operationId);
    if (!responses) throw new RangeError(`unknown operation ${operationId}`);
    const key = [String(status), `${Math.floor(status / 100)}XX`, 'default'].find((k) => responses.has(k));
    const issues =
      key === undefined
        ? this.#undocumented(operationId, status, body)
        : (responses.get(key)?.(body, FIELD) ?? []);
    return { valid: issues.length === 0, issues };
  }

  /** An undocumented status passes only as an error status carrying the error body. */
  #undocumented(operationId: string, status: number, body: unknown): SchemaIssue[] {
    const bodyIssues = status >= 400 ? this.#errorBody(body, FIELD) : [];
    if (status >= 400 && bodyIssues.length === 0) return [];
    const message =
      status >= 400
        ? `status ${status} is not documented for ${operationId} and its body is not the error body`
        : `status ${status} is not documented for ${operationId}`;
    return [{ field: 'status', keyword: 'status', message, limit: status }, ...bodyIssues];
  }
}

let shared: ResponseValidator | undefined;

/** One validator per process over this repository's document. */
export function getResponseValidator(): ResponseValidator {
  shared ??= new ResponseValidator();
  return shared;
}
