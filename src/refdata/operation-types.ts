// Request and response types of each operation, read off the types generated from the
// OpenAPI document (src/refdata/generated). A change to the document changes these types.

import type { components, operations } from './generated/reference-data.ts';

export type OperationId = keyof operations;
export type Schemas = components['schemas'];

type Parameters<Op extends OperationId> = operations[Op]['parameters'];

/** X-Credential-Username comes from the client's options, never from the caller. */
type ClientSuppliedHeader = 'X-Credential-Username';

type PathParams<Op extends OperationId> = NonNullable<Parameters<Op>['path']>;
type QueryParams<Op extends OperationId> = NonNullable<Parameters<Op>['query']>;
type HeaderParams<Op extends OperationId> = [NonNullable<Parameters<Op>['header']>] extends [never]
  ? never
  : Omit<NonNullable<Parameters<Op>['header']>, ClientSuppliedHeader>;
type RequestBody<Op extends OperationId> = operations[Op] extends { requestBody: { content: infer Content } }
  ? Content[keyof Content]
  : never;

/** One member per part the operation has; optional when nothing in that part is required. */
type Part<Name extends string, Value> = [Value] extends [never]
  ? unknown
  : keyof Value extends never
    ? unknown
    : object extends Value
      ? { [Key in Name]?: Value }
      : { [Key in Name]: Value };

export type RequestInput<Op extends OperationId> = Part<'path', PathParams<Op>> &
  Part<'query', QueryParams<Op>> &
  Part<'headers', HeaderParams<Op>> &
  ([RequestBody<Op>] extends [never] ? unknown : { body: RequestBody<Op> });

export type ResponseBody<Op extends OperationId> = operations[Op]['responses'] extends {
  200: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

export interface CallOptions {
  /** Aborts the call, including its retries and backoff waits. */
  signal?: AbortSignal;
  /** Overrides the client's per-attempt time-out. */
  timeoutMs?: number;
}

/** The parameter list of an operation's client method: `input` may be left out when empty. */
export type OperationArgs<Op extends OperationId> =
  object extends RequestInput<Op>
    ? [input?: RequestInput<Op>, options?: CallOptions]
    : [input: RequestInput<Op>, options?: CallOptions];
