// Runs one operation end to end: fill the client-supplied header parameters, validate against
// the document, build the URL, then attempt under the retry policy. A refused bearer token
// (401/403) is refreshed and the request repeated once; that repeat is outside the retry
// budget because the refused request was not processed. Every attempt is published on the
// pipeline's `http` diagnostics channel, every retry on the client's own retry channel and on
// the pipeline's `retry` channel.

import diagnosticsChannel from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import { pipelineEvents } from '../observability/events.ts';
import type { Authenticator, AttemptCredentials } from './authenticator.ts';
import { RefDataConfigError, RefDataTransportError, type RefDataHttpError } from './errors.ts';
import {
  errorFromStatus,
  exchange,
  parseSuccess,
  type Exchange,
  type ExchangeResult,
} from './http-exchange.ts';
import type { OperationDescriptor, ReferenceDataDocument } from './openapi-document.ts';
import type { ResolvedClientOptions } from './options.ts';
import type { CallOptions } from './operation-types.ts';
import { jsonBytes } from './json-bytes.ts';
import type { Redactor } from '../observability/secret-redactor.ts';
import type { RequestParts, RequestValidator } from './request-validator.ts';
import { nextRetryDelayMs } from './retry-policy.ts';

/**
 * Published before each retry wait: `{ operation, attempt, delayMs, code, status? }`. The delay
 * is what a rate limiter needs to hold back other calls after a 429.
 */
export const retryChannel = diagnosticsChannel.channel('partner-enrich:refdata:retry');

export interface ExecutorParts {
  options: Readonly<ResolvedClientOptions>;
  /**
   * The document and the validator, read at the first request: a process that never calls the
   * service should not pay for them (the validator's load and compile take about a tenth of a
   * second).
   */
  document: () => ReferenceDataDocument;
  validator: () => RequestValidator;
  authenticator: Authenticator;
  redactor: Redactor;
}

export class RequestExecutor {
  readonly #parts: ExecutorParts;

  constructor(parts: ExecutorParts) {
    this.#parts = parts;
  }

  /**
   * `read` turns a 2xx body into the result (JSON.parse of a non-empty body by default).
   * `validated`: the input is the client's own constant, valid by construction; the request
   * validator (ajv and the operation's compiled schemas) is then not loaded for it.
   */
  async execute(
    operationId: string,
    input: RequestParts = {},
    call: CallOptions = {},
    read?: (body: Buffer) => unknown,
    validated = false,
  ): Promise<unknown> {
    const { options, authenticator } = this.#parts;
    const operation = this.#parts.document().operations.get(operationId);
    if (!operation) throw new RangeError(`unknown operation ${operationId}`);
    const root = options.roots[operation.root];
    if (root === undefined) {
      throw new RefDataConfigError(
        'REFDATA_NOT_CONFIGURED',
        `${operationId} needs the ${operation.root} root`,
        {
          details: { operation: operationId, root: operation.root },
        },
      );
    }
    const parts = withClientHeaders(operation, input, authenticator.credentialUsername);
    if (!validated) this.#parts.validator().assertValid(operationId, parts);

    const { body, contentType } = encodeBody(operation, parts.body);
    const request: Exchange = {
      operation: operationId,
      safeToRetry: operation.safeToRetry,
      method: operation.method,
      url: buildUrl(root, operation.path, parts),
      headers: {
        accept: 'application/json',
        ...(contentType ? { 'content-type': contentType } : {}),
        ...stringHeaders(parts.headers),
      },
      timeoutMs: call.timeoutMs ?? options.timeoutMs,
      signal: call.signal,
      dispatcher: options.dispatcher,
      ...(body === undefined ? {} : { body }),
    };
    return this.#attemptUnderPolicy(operation, request, read);
  }

  async #attemptUnderPolicy(
    operation: OperationDescriptor,
    request: Exchange,
    read: ((body: Buffer) => unknown) | undefined,
  ): Promise<unknown> {
    const { options, authenticator, redactor } = this.#parts;
    let refreshedRefusedToken = false;
    for (let attemptNumber = 1; ; attemptNumber++) {
      const credentials: AttemptCredentials = await authenticator.credentialsFor(operation.root);
      const attempt: Exchange = { ...request, headers: { ...request.headers, ...credentials.headers } };
      let error: RefDataHttpError | RefDataTransportError;
      const startedAt = performance.now();
      try {
        const result: ExchangeResult = await exchange(attempt);
        publishHttp(operation.operationId, result.status, startedAt);
        if (result.status >= 200 && result.status < 300) return parseSuccess(attempt, result, read);
        const refused = result.status === 401 || result.status === 403;
        if (refused && !refreshedRefusedToken && authenticator.refused(credentials)) {
          refreshedRefusedToken = true;
          attemptNumber--;
          continue;
        }
        error = errorFromStatus(attempt, result, redactor, options.now());
      } catch (thrown) {
        if (!(thrown instanceof RefDataTransportError)) throw thrown;
        publishHttp(operation.operationId, 'error', startedAt);
        error = thrown;
      }
      const delayMs = nextRetryDelayMs(error, attemptNumber, options.retry, options.random);
      if (delayMs === undefined) throw error;
      // Counted where the operator looks (retries_total by code): the 429s and 5xx a retry
      // here gets through never reach the pipeline's own retries.
      pipelineEvents.retry.publish({
        operation: operation.operationId,
        reason: error.code,
        attempt: attemptNumber,
      });
      if (retryChannel.hasSubscribers) {
        const status = 'status' in error ? error.status : undefined;
        retryChannel.publish({
          operation: operation.operationId,
          attempt: attemptNumber,
          delayMs,
          code: error.code,
          status,
        });
      }
      await this.#wait(delayMs, operation.operationId, request.signal);
    }
  }

  async #wait(delayMs: number, operationId: string, signal: AbortSignal | undefined): Promise<void> {
    try {
      await this.#parts.options.sleep(delayMs, signal);
    } catch (cause) {
      if (!signal?.aborted) throw cause;
      throw new RefDataTransportError('REFDATA_ABORTED', operationId, 'aborted by the caller', {
        canRetry: false,
        cause,
      });
    }
  }
}

function publishHttp(operation: string, status: number | 'error', startedAt: number): void {
  if (pipelineEvents.http.hasSubscribers) {
    pipelineEvents.http.publish({ operation, status, seconds: (performance.now() - startedAt) / 1000 });
  }
}

function withClientHeaders(
  operation: OperationDescriptor,
  input: RequestParts,
  credentialUsername?: string,
): RequestParts {
  const needsUsername = operation.parameters.some(
    (parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === 'x-credential-username',
  );
  if (!needsUsername || credentialUsername === undefined) return input;
  return { ...input, headers: { ...input.headers, 'x-credential-username': credentialUsername } };
}

function buildUrl(root: string, pathTemplate: string, parts: RequestParts): string {
  const path = pathTemplate.replace(/\{([^}]+)\}/g, (_match, name: string) =>
    encodeURIComponent(String(parts.path?.[name])),
  );
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(parts.query ?? {})) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item !== undefined && item !== null) query.append(name, String(item));
    }
  }
  const search = query.size > 0 ? `?${query.toString()}` : '';
  return `${root.replace(/\/+$/, '')}${path}${search}`;
}

function encodeBody(
  operation: OperationDescriptor,
  body: unknown,
): { body?: string | Buffer; contentType?: string } {
  if (!operation.requestBody || body === undefined) return {};
  const { contentType } = operation.requestBody;
  if (contentType === 'application/x-www-form-urlencoded') {
    const form = Object.entries(body as Record<string, unknown>).map(([name, value]): [string, string] => [
      name,
      String(value),
    ]);
    return { body: new URLSearchParams(form).toString(), contentType };
  }
  return { body: jsonBytes(body), contentType };
}

function stringHeaders(headers: RequestParts['headers']): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers ?? {})
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [name.toLowerCase(), String(value)]),
  );
}
