// Errors of the reference data client. Every code is in one closed list (catalogued in
// docs/REFDATA-CLIENT.md, kept in sync by a test). Messages and details are built only from
// redacted text, so no API key, secret, password or token can reach a log through an error.

import { PartnerEnrichError, type ErrorOptions } from '../errors.ts';
import type { SchemaIssue } from './schema-validation.ts';

export const REFDATA_CONFIG_ERROR_CODES = ['REFDATA_INVALID_OPTIONS', 'REFDATA_NOT_CONFIGURED'] as const;
export const REFDATA_HTTP_ERROR_CODES = [
  'REFDATA_BAD_REQUEST',
  'REFDATA_AUTH_FAILED',
  'REFDATA_NOT_FOUND',
  'REFDATA_RATE_LIMITED',
  'REFDATA_REQUEST_TIMEOUT',
  'REFDATA_SERVER_ERROR',
  'REFDATA_UNEXPECTED_STATUS',
  'REFDATA_INVALID_RESPONSE',
] as const;
export const REFDATA_TRANSPORT_ERROR_CODES = [
  'REFDATA_NETWORK_ERROR',
  'REFDATA_TIMEOUT',
  'REFDATA_ABORTED',
] as const;
export const REFDATA_JOB_ERROR_CODES = [
  'REFDATA_JOB_FAILED',
  'REFDATA_JOB_TIMEOUT',
  'REFDATA_JOB_UNREACHABLE',
] as const;

export const REFDATA_ERROR_CODES = [
  ...REFDATA_CONFIG_ERROR_CODES,
  'REFDATA_INVALID_REQUEST',
  ...REFDATA_HTTP_ERROR_CODES,
  ...REFDATA_TRANSPORT_ERROR_CODES,
  'REFDATA_PAGE_CURSOR_REPEATED',
  ...REFDATA_JOB_ERROR_CODES,
] as const;

export type RefDataErrorCode = (typeof REFDATA_ERROR_CODES)[number];

export abstract class RefDataError<
  Code extends RefDataErrorCode = RefDataErrorCode,
> extends PartnerEnrichError<Code> {
  constructor(code: Code, message: string, options: ErrorOptions = {}) {
    super(code, message, options);
  }
}

export const isRefDataError = (error: unknown): error is RefDataError => error instanceof RefDataError;

/** Client options are invalid, or an operation needs a root or credential that was not given. */
export class RefDataConfigError extends RefDataError<(typeof REFDATA_CONFIG_ERROR_CODES)[number]> {}

/** The request breaks a documented limit; raised before anything is sent. */
export class RefDataRequestValidationError extends RefDataError<'REFDATA_INVALID_REQUEST'> {
  readonly operation: string;
  readonly issues: readonly SchemaIssue[];

  constructor(operation: string, issues: readonly SchemaIssue[]) {
    const summary = issues.map((issue) => issue.message).join('; ');
    super('REFDATA_INVALID_REQUEST', `${operation}: invalid request: ${summary}`, {
      details: { operation, issues },
    });
    this.operation = operation;
    this.issues = issues;
  }
}

export interface HttpFailure {
  operation: string;
  status: number;
  /** `code` of the error body, when the service sent one. */
  serviceCode?: string;
  serviceMessage?: string;
  requestId?: string;
  field?: string;
  limit?: number | string;
  retryAfterMs?: number;
}

/** The service answered with a status other than 2xx, or a 2xx body that is not JSON. */
export class RefDataHttpError extends RefDataError<(typeof REFDATA_HTTP_ERROR_CODES)[number]> {
  readonly operation: string;
  readonly status: number;
  readonly serviceCode: string | undefined;
  readonly requestId: string | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(code: RefDataHttpError['code'], failure: HttpFailure, canRetry: boolean) {
    const { operation, status, serviceCode, serviceMessage, requestId } = failure;
    const what = [serviceCode, serviceMessage].filter(Boolean).join(': ');
    const message = `${operation} failed with HTTP ${status}${what ? ` (${what})` : ''}${requestId ? ` [request ${requestId}]` : ''}`;
    super(code, message, { canRetry, details: withoutUndefined({ ...failure }) });
    this.operation = operation;
    this.status = status;
    this.serviceCode = serviceCode;
    this.requestId = requestId;
    this.retryAfterMs = failure.retryAfterMs;
  }
}

export const httpErrorCodeForStatus = (status: number): RefDataHttpError['code'] => {
  if (status === 400) return 'REFDATA_BAD_REQUEST';
  if (status === 401 || status === 403) return 'REFDATA_AUTH_FAILED';
  if (status === 404) return 'REFDATA_NOT_FOUND';
  if (status === 408) return 'REFDATA_REQUEST_TIMEOUT';
  if (status === 429) return 'REFDATA_RATE_LIMITED';
  if (status >= 500) return 'REFDATA_SERVER_ERROR';
  return 'REFDATA_UNEXPECTED_STATUS';
};

/** No HTTP answer: connection failure, time-out or the caller's abort. */
export class RefDataTransportError extends RefDataError<(typeof REFDATA_TRANSPORT_ERROR_CODES)[number]> {
  readonly operation: string;
  /** System error code of the cause, e.g. ECONNRESET. */
  readonly systemCode: string | undefined;

  constructor(
    code: RefDataTransportError['code'],
    operation: string,
    message: string,
    options: { canRetry: boolean; systemCode?: string; cause?: unknown },
  ) {
    super(code, `${operation}: ${message}`, {
      canRetry: options.canRetry,
      cause: options.cause,
      details: withoutUndefined({ operation, systemCode: options.systemCode }),
    });
    this.operation = operation;
    this.systemCode = options.systemCode;
  }
}

/** A paged read returned the cursor it was given; walking on would loop forever. */
export class RefDataPagingError extends RefDataError<'REFDATA_PAGE_CURSOR_REPEATED'> {
  constructor(operation: string, cursor: string) {
    super(
      'REFDATA_PAGE_CURSOR_REPEATED',
      `${operation}: nextStartAfter repeats the cursor ${cursor}, asked with before`,
      {
        details: { operation, cursor },
      },
    );
  }
}

export interface JobFailure {
  kind: 'extdLookupJob' | 'eventStoreInitializerJob' | 'bulkLookup';
  jobId: string;
  status: string | undefined;
  statusMessage?: string;
}

/**
 * A polled job ended in a failed state, did not end within the time budget, or could not be
 * read (`cause`: the last read's error, after the client's retries and the missed polls).
 */
export class RefDataJobError extends RefDataError<(typeof REFDATA_JOB_ERROR_CODES)[number]> {
  readonly jobId: string;
  readonly status: string | undefined;

  constructor(code: RefDataJobError['code'], failure: JobFailure, options: { cause?: RefDataError } = {}) {
    const reason = failure.statusMessage ? `: ${failure.statusMessage}` : '';
    const lastStatus = `last status ${failure.status ?? 'none'}`;
    const message =
      code === 'REFDATA_JOB_TIMEOUT'
        ? `${failure.kind} ${failure.jobId} did not finish in time (${lastStatus})`
        : code === 'REFDATA_JOB_UNREACHABLE'
          ? `${failure.kind} ${failure.jobId} could not be read (${lastStatus}): ${options.cause?.message ?? 'no answer'}`
          : `${failure.kind} ${failure.jobId} ended with status ${failure.status ?? 'none'}${reason}`;
    super(code, message, {
      // The job goes on on the service whether or not it could be read or finished in time.
      canRetry: code !== 'REFDATA_JOB_FAILED',
      cause: options.cause,
      details: withoutUndefined({ ...failure, causeCode: options.cause?.code }),
    });
    this.jobId = failure.jobId;
    this.status = failure.status;
  }
}

function withoutUndefined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}
