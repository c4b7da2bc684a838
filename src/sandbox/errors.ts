// Errors of the sandbox. Two closed lists: what can go wrong starting the sandbox, and the
// `code` values its HTTP error bodies carry (the ErrorBody schema of the OpenAPI document).

import { PartnerEnrichError } from '../errors.ts';

export const SANDBOX_ERROR_CODES = [
  /** Options outside their schema. */
  'SANDBOX_INVALID_OPTIONS',
  /** The port cannot be listened on (in use, or not allowed). details: host, port, systemCode. */
  'SANDBOX_LISTEN_FAILED',
] as const;
export type SandboxErrorCode = (typeof SANDBOX_ERROR_CODES)[number];

/** The sandbox could not start. */
export class SandboxError extends PartnerEnrichError<SandboxErrorCode> {}

export const SANDBOX_HTTP_ERROR_CODES = [
  /** The request breaks the OpenAPI document (a limit, a type, a required member). */
  'INVALID_REQUEST',
  /** No credentials where the root needs them. */
  'UNAUTHORIZED',
  /** Wrong or expired credentials, or a permission the user lacks. */
  'FORBIDDEN',
  'NOT_FOUND',
  /** Injected throttling; the request was not processed. */
  'RATE_LIMITED',
  /** Injected server failure; the request was not processed. */
  'INJECTED_SERVER_ERROR',
  /** A bug in the sandbox itself, e.g. an answer that does not fit the OpenAPI document. */
  'INTERNAL_ERROR',
] as const;
export type SandboxHttpErrorCode = (typeof SANDBOX_HTTP_ERROR_CODES)[number];

export interface SandboxHttpErrorOptions {
  /** Request field at fault, as `body.limit` or `query.limit`. */
  field?: string;
  /** The bound the field broke. */
  limit?: number | string;
  headers?: Record<string, string>;
}

/** Thrown by route handlers; the error handler turns it into an ErrorBody answer. */
export class SandboxHttpError extends PartnerEnrichError<SandboxHttpErrorCode> {
  readonly status: number;
  readonly field: string | undefined;
  readonly limit: number | string | undefined;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: SandboxHttpErrorCode,
    message: string,
    options: SandboxHttpErrorOptions = {},
  ) {
    super(code, message, { canRetry: status === 429 || status >= 500 });
    this.status = status;
    this.field = options.field;
    this.limit = options.limit;
    this.headers = options.headers ?? {};
  }
}

export const invalidRequest = (field: string, message: string, limit?: number | string): SandboxHttpError =>
  new SandboxHttpError(400, 'INVALID_REQUEST', message, limit === undefined ? { field } : { field, limit });

export const notFound = (what: string): SandboxHttpError =>
  new SandboxHttpError(404, 'NOT_FOUND', `${what} not found`);
