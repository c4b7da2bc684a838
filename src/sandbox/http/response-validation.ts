// Every answer of an API operation is checked against the OpenAPI document before it is sent,
// with the client's own response validator: a sandbox that drifts from the document would
// otherwise teach the pipeline (and its tests) shapes the real service never promised. A body
// that does not fit becomes a 500 INTERNAL_ERROR naming the operation and the fields at fault.
// Runs as preSerialization, on the object itself: every JSON answer passes there (handlers and
// the error handler alike), and nothing has to be parsed back.

import type { FastifyReply, FastifyRequest } from 'fastify';
import { getResponseValidator, type SchemaIssue } from '../../refdata/index.ts';
import { SandboxHttpError } from '../errors.ts';
import { errorBodyOf } from './error-reply.ts';

/** How many issues the 500 message names; the first ones locate the bug well enough. */
const NAMED_ISSUES = 3;
/** How many the log lists: a broken item of a 1,000-result page repeats 1,000 times. */
const LOGGED_ISSUES = 20;

export async function validateResponse(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Promise<unknown> {
  const operation = request.routeOptions.config.operation;
  if (!operation) return payload;
  const status = reply.statusCode;
  const { issues } = getResponseValidator().validate(operation.operationId, status, payload);
  if (issues.length === 0) return payload;
  // Fields and keywords only: the body may carry anything, the log must not.
  request.log.error(
    {
      operationId: operation.operationId,
      status,
      issueCount: issues.length,
      issues: issues.slice(0, LOGGED_ISSUES).map(({ field, keyword }) => ({ field, keyword })),
    },
    'response does not fit the OpenAPI document',
  );
  void reply.code(500);
  return errorBodyOf(
    new SandboxHttpError(500, 'INTERNAL_ERROR', messageOf(operation.operationId, status, issues)),
    request.id,
  );
}

function messageOf(operationId: string, status: number, issues: readonly SchemaIssue[]): string {
  const named = issues.slice(0, NAMED_ISSUES).map((issue) => `${issue.field} (${issue.keyword})`);
  const more = issues.length > NAMED_ISSUES ? ` and ${issues.length - NAMED_ISSUES} more` : '';
  return `the ${status} response of ${operationId} does not fit the OpenAPI document: ${named.join(', ')}${more}`;
}
