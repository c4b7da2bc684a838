// The OpenAPI document is the single description of the reference data service: the client
// reads each operation's method, path, root and retry safety from it, and the request
// validator compiles its limits. Reading it once at run time (instead of copying facts into
// code) means a change to the document changes the client's behaviour with it.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';

// The YAML parser (72 modules, 20 ms of CPU) is required only where YAML text is parsed: the
// processes read the document's JSON copy (docs/CONTAINER.md, start-up of `run`).
const require = createRequire(import.meta.url);

export const REFERENCE_DATA_DOCUMENT_URL = new URL(
  '../../schemas/openapi/reference-data.yaml',
  import.meta.url,
);

/**
 * The document as JSON, generated from the YAML (`npm run generate:api`, checked by `npm run
 * check:generated`): `run` reads it at start (its credential check is a request), and JSON.parse
 * takes a few milliseconds where parsing the YAML took about 80 ms and loading the parser 20 ms.
 */
export const REFERENCE_DATA_DOCUMENT_JSON_URL = new URL(
  '../../schemas/openapi/reference-data.json',
  import.meta.url,
);

export const ROOT_NAMES = ['base', 'auth', 'dataExchange', 'identity', 'usage'] as const;
export type RootName = (typeof ROOT_NAMES)[number];

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
export type HttpMethod = Uppercase<(typeof HTTP_METHODS)[number]>;

export type JsonObject = Record<string, unknown>;

export interface ParameterDescriptor {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: unknown;
}

export interface ResponseDescriptor {
  /** The key of the document: `200`, a range such as `5XX` (upper case), or `default`. */
  status: string;
  /** The JSON media type's schema; absent when the response documents no JSON body. */
  schema?: unknown;
}

export interface OperationDescriptor {
  operationId: string;
  method: HttpMethod;
  /** Path template relative to the root, e.g. `/extd/lookupjobs/{id}`. */
  path: string;
  root: RootName;
  safeToRetry: boolean;
  deprecated: boolean;
  parameters: readonly ParameterDescriptor[];
  requestBody?: { required: boolean; contentType: string; schema: unknown };
  responses: readonly ResponseDescriptor[];
}

export interface ReferenceDataDocument {
  raw: JsonObject;
  operations: ReadonlyMap<string, OperationDescriptor>;
  /** Resolves a local `$ref` such as `#/components/schemas/Status`. */
  resolveRef(ref: string): unknown;
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function objectAt(value: unknown, where: string): JsonObject {
  if (!isObject(value)) throw new Error(`reference data document: ${where} must be an object`);
  return value;
}

let cached: ReferenceDataDocument | undefined;

/** The document of this repository, parsed once per process. */
export function loadReferenceDataDocument(): ReferenceDataDocument {
  cached ??= referenceDataDocument(JSON.parse(readFileSync(REFERENCE_DATA_DOCUMENT_JSON_URL, 'utf8')));
  return cached;
}

export function parseReferenceDataDocument(yamlText: string): ReferenceDataDocument {
  const { parse } = require('yaml') as typeof Yaml;
  return referenceDataDocument(parse(yamlText));
}

function referenceDataDocument(parsed: unknown): ReferenceDataDocument {
  const raw = objectAt(parsed, 'document');
  const resolveRef = (ref: string): unknown => {
    if (!ref.startsWith('#/'))
      throw new Error(`reference data document: only local $ref is supported, got ${ref}`);
    return ref
      .slice(2)
      .split('/')
      .reduce<unknown>(
        (node, segment) => objectAt(node, ref)[segment.replaceAll('~1', '/').replaceAll('~0', '~')],
        raw,
      );
  };
  const deref = (value: unknown): JsonObject => {
    const node = objectAt(value, 'reference');
    return typeof node.$ref === 'string' ? deref(resolveRef(node.$ref)) : node;
  };

  const operations = new Map<string, OperationDescriptor>();
  for (const [path, pathItemValue] of Object.entries(objectAt(raw.paths, 'paths'))) {
    const pathItem = objectAt(pathItemValue, path);
    const shared = Array.isArray(pathItem.parameters) ? pathItem.parameters : [];
    for (const method of HTTP_METHODS) {
      if (pathItem[method] === undefined) continue;
      const operation = objectAt(pathItem[method], `${method} ${path}`);
      const descriptor = describeOperation(operation, method, path, shared, deref);
      operations.set(descriptor.operationId, descriptor);
    }
  }
  return { raw, operations, resolveRef };
}

function describeOperation(
  operation: JsonObject,
  method: (typeof HTTP_METHODS)[number],
  path: string,
  sharedParameters: unknown[],
  deref: (value: unknown) => JsonObject,
): OperationDescriptor {
  const where = `${method} ${path}`;
  const { operationId, 'x-root': root, 'x-safe-to-retry': safeToRetry } = operation;
  if (typeof operationId !== 'string')
    throw new Error(`reference data document: ${where} has no operationId`);
  if (!ROOT_NAMES.includes(root as RootName))
    throw new Error(`reference data document: ${where} has no valid x-root`);
  if (typeof safeToRetry !== 'boolean')
    throw new Error(`reference data document: ${where} has no x-safe-to-retry`);

  const own = Array.isArray(operation.parameters) ? operation.parameters : [];
  const parameters = [...sharedParameters, ...own].map((value): ParameterDescriptor => {
    const parameter = deref(value);
    if (parameter.in !== 'path' && parameter.in !== 'query' && parameter.in !== 'header') {
      throw new Error(`reference data document: ${where} has a parameter in ${String(parameter.in)}`);
    }
    return {
      name: String(parameter.name),
      in: parameter.in,
      required: parameter.required === true,
      schema: parameter.schema ?? {},
    };
  });

  const descriptor: OperationDescriptor = {
    operationId,
    method: method.toUpperCase() as HttpMethod,
    path,
    root: root as RootName,
    safeToRetry,
    deprecated: operation.deprecated === true,
    parameters,
    responses: describeResponses(operation.responses, where, deref),
  };
  if (operation.requestBody !== undefined) {
    const requestBody = deref(operation.requestBody);
    const [contentType, media] =
      Object.entries(objectAt(requestBody.content, `${where} requestBody.content`))[0] ?? [];
    if (contentType === undefined)
      throw new Error(`reference data document: ${where} has an empty requestBody`);
    descriptor.requestBody = {
      required: requestBody.required === true,
      contentType,
      schema: objectAt(media, `${where} ${contentType}`).schema ?? {},
    };
  }
  return descriptor;
}

function describeResponses(
  responses: unknown,
  where: string,
  deref: (value: unknown) => JsonObject,
): ResponseDescriptor[] {
  return Object.entries(objectAt(responses, `${where} responses`)).map(([key, value]) => {
    // OpenAPI allows `5xx` as well as `5XX`; one spelling keeps the lookup simple.
    const status = key === 'default' ? key : key.toUpperCase();
    const content = deref(value).content;
    // Any JSON media type (application/json, application/problem+json) carries the body schema.
    const json = isObject(content)
      ? Object.entries(content).find(([contentType]) => /[/+]json\b/.test(contentType))
      : undefined;
    const schema = json && objectAt(json[1], `${where} ${status} ${json[0]}`).schema;
    return schema === undefined ? { status } : { status, schema };
  });
}
