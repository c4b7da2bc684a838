// Every failure answers with the document's ErrorBody: a stable `code`, a message, and for a
// bad request the `field` and the `limit` it broke. Fastify's own 4xx errors (body that is not
// JSON, too large, wrong media type) are reported the same way, against the body.

import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Schemas } from '../../refdata/index.ts';
import { SandboxHttpError } from '../errors.ts';

type ErrorBody = Schemas['ErrorBody'];

export function errorBodyOf(error: SandboxHttpError, requestId: string): ErrorBody {
  const body: ErrorBody = { code: error.code, message: error.message, requestId };
  if (error.field !== undefined) body.field = error.field;
  if (error.limit !== undefined) body.limit = error.limit;
  return body;
}

function asSandboxError(error: FastifyError | SandboxHttpError): SandboxHttpError {
  if (error instanceof SandboxHttpError) return error;
  const status = error.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return new SandboxHttpError(status, 'INVALID_REQUEST', error.message, { field: 'body' });
  }
  return new SandboxHttpError(500, 'INTERNAL_ERROR', error.message);
}

export async function replyWithError(
  error: FastifyError | SandboxHttpError,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<ErrorBody> {
  const sandboxError = asSandboxError(error);
  if (sandboxError.status >= 500 && sandboxError.code === 'INTERNAL_ERROR') request.log.error(error);
  void reply.code(sandboxError.status).headers(sandboxError.headers);
  return errorBodyOf(sandboxError, request.id);
}

export async function replyNotFound(request: FastifyRequest, reply: FastifyReply): Promise<ErrorBody> {
  void reply.code(404);
  return { code: 'NOT_FOUND', message: `no route ${request.method} ${request.url}`, requestId: request.id };
}

/** Fastify's router could not read the path (not valid percent-encoding): its own body lacked ours. */
export function replyUnreadablePath(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const refused = new SandboxHttpError(
    400,
    'INVALID_REQUEST',
    `the request's path cannot be read: ${error.message}`,
    {
      field: 'path',
    },
  );
  void reply.code(400).send(errorBodyOf(refused, request.id));
}
