// One HTTP attempt: send, read the whole body within the time-out, and turn every way it can go
// wrong into a typed error. Retrying is the executor's concern, not this module's.

import { request, type Dispatcher } from 'undici';
import { RefDataHttpError, RefDataTransportError, httpErrorCodeForStatus } from './errors.ts';
import type { Redactor } from '../observability/secret-redactor.ts';
import { isRetryable, parseRetryAfterMs } from './retry-policy.ts';

export interface Exchange {
  operation: string;
  safeToRetry: boolean;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  dispatcher?: Dispatcher | undefined;
}

export interface ExchangeResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The whole body as it came: a result page's reader walks the bytes (see parseSuccess). */
  body: Buffer;
}

/**
 * The most of a body read: far above any answer of the service (a result page of 500 tasks is
 * about 1 MB). Unbounded, a faulty hop streaming within the time-out filled the heap.
 */
export const MAX_RESPONSE_BYTES = 64 * 2 ** 20;

/** The body's bytes, or undefined once they pass `max` (the rest is not read). */
async function bodyWithin(body: Dispatcher.ResponseData['body'], max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > max) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, length);
}

/**
 * Sends one request; throws RefDataTransportError when no complete answer arrives, and
 * REFDATA_INVALID_RESPONSE (not retried) for a body over MAX_RESPONSE_BYTES.
 */
export async function exchange(attempt: Exchange): Promise<ExchangeResult> {
  const timeout = AbortSignal.timeout(attempt.timeoutMs);
  const signal = attempt.signal ? AbortSignal.any([attempt.signal, timeout]) : timeout;
  let tooLarge: number;
  try {
    const response = await request(attempt.url, {
      method: attempt.method as Dispatcher.HttpMethod,
      headers: attempt.headers,
      body: attempt.body ?? null,
      signal,
      ...(attempt.dispatcher ? { dispatcher: attempt.dispatcher } : {}),
    });
    const bytes = await bodyWithin(response.body, MAX_RESPONSE_BYTES);
    if (bytes === undefined) {
      tooLarge = response.statusCode;
    } else {
      // A UTF-8 byte order mark is no part of the JSON: decoding as text (the Fetch standard's
      // text()) drops it, and so does this for the readers of bytes.
      const mark = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
      return { status: response.statusCode, headers: response.headers, body: bytes.subarray(mark) };
    }
  } catch (cause) {
    if (attempt.signal?.aborted) {
      throw new RefDataTransportError('REFDATA_ABORTED', attempt.operation, 'aborted by the caller', {
        canRetry: false,
        cause,
      });
    }
    if (timeout.aborted) {
      throw new RefDataTransportError(
        'REFDATA_TIMEOUT',
        attempt.operation,
        `no answer within ${attempt.timeoutMs} ms`,
        {
          canRetry: isRetryable({ kind: 'timeout' }, attempt.safeToRetry),
          cause,
        },
      );
    }
    const systemCode = systemCodeOf(cause);
    const reason = systemCode ?? (cause instanceof Error ? cause.name : 'unknown failure');
    throw new RefDataTransportError('REFDATA_NETWORK_ERROR', attempt.operation, `network error (${reason})`, {
      canRetry: isRetryable(
        systemCode ? { kind: 'network', systemCode } : { kind: 'network' },
        attempt.safeToRetry,
      ),
      cause,
      ...(systemCode ? { systemCode } : {}),
    });
  }
  throw new RefDataHttpError(
    'REFDATA_INVALID_RESPONSE',
    {
      operation: attempt.operation,
      status: tooLarge,
      serviceMessage: `response body over ${MAX_RESPONSE_BYTES} bytes, not read further`,
    },
    false,
  );
}

/** undici wraps socket errors; the system code may sit on the error or on its cause. */
function systemCodeOf(error: unknown): string | undefined {
  for (
    let current = error, depth = 0;
    current instanceof Error && depth < 4;
    current = current.cause, depth++
  ) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
  }
  return undefined;
}

export const headerValue = (headers: ExchangeResult['headers'], name: string): string | undefined => {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Parses a 2xx body, or reads it with `read`; without `read` an empty body is `undefined`. A
 * body that is not JSON, or that `read` refuses, is an error.
 */
export function parseSuccess(
  attempt: Exchange,
  result: ExchangeResult,
  read?: (body: Buffer) => unknown,
): unknown {
  try {
    if (read) return read(result.body);
    const text = result.body.toString();
    return text.trim() === '' ? undefined : JSON.parse(text);
  } catch (error) {
    // The cursor's own refusals say what was expected where (a byte offset); JSON.parse's quote
    // the body, which is the service's data, not for an error message.
    const message = (error as Error).message;
    const refused = message.startsWith('JSON: ')
      ? `response body refused: ${message}`
      : 'response body is not JSON';
    throw new RefDataHttpError(
      'REFDATA_INVALID_RESPONSE',
      { operation: attempt.operation, status: result.status, serviceMessage: refused },
      false,
    );
  }
}

/** The typed error for a non-2xx answer, built from the (x-assumed) ErrorBody when present. */
export function errorFromStatus(
  attempt: Exchange,
  result: ExchangeResult,
  redactor: Redactor,
  now: number,
): RefDataHttpError {
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(result.body.toString());
    if (isRecord(parsed)) body = parsed;
  } catch {
    // Not every failing hop (proxies, gateways) answers with JSON; the status still tells enough.
  }
  const text = (value: unknown): string | undefined =>
    typeof value === 'string' ? redactor.redact(value) : undefined;
  const limit = typeof body.limit === 'number' ? body.limit : text(body.limit);
  const retryAfterMs =
    result.status === 429 || result.status === 503
      ? parseRetryAfterMs(headerValue(result.headers, 'retry-after'), now)
      : undefined;
  return new RefDataHttpError(
    httpErrorCodeForStatus(result.status),
    {
      operation: attempt.operation,
      status: result.status,
      serviceCode: text(body.code),
      serviceMessage: text(body.message),
      requestId: text(body.requestId) ?? text(headerValue(result.headers, 'x-request-id')),
      field: text(body.field),
      limit,
      retryAfterMs,
    },
    isRetryable({ kind: 'status', status: result.status }, attempt.safeToRetry),
  );
}
