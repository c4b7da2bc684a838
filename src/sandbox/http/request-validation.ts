// Every request is checked against the OpenAPI document with the client's own validator, so
// the limits the server enforces are exactly the ones the client checks before sending. The
// first issue names the field and the limit in the 400 answer; the message lists them all.

import type { FastifyRequest } from 'fastify';
import { getRequestValidator } from '../../refdata/index.ts';
import { invalidRequest } from '../errors.ts';
import { documentDefaults, withDefaults } from './document-defaults.ts';

export async function validateRequest(request: FastifyRequest): Promise<void> {
  const operation = request.routeOptions.config.operation;
  if (!operation) return;
  const result = getRequestValidator().validate(
    operation.operationId,
    {
      path: request.params as Record<string, unknown>,
      query: request.query as Record<string, unknown>,
      headers: request.headers,
      body: request.body ?? undefined,
    },
    { coerceParameters: true },
  );
  const [first] = result.issues;
  if (first)
    throw invalidRequest(first.field, result.issues.map((issue) => issue.message).join('; '), first.limit);
  request.validated = {
    path: result.parts.path ?? {},
    query: withDefaults(result.parts.query ?? {}, documentDefaults(operation.operationId).query),
    body: result.parts.body,
  };
}
