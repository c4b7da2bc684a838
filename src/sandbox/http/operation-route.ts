// Routes are registered by operationId: method and path come from the OpenAPI document, so a
// handler cannot be mounted on a path the document does not describe, and every route carries
// the operation's root (for authentication) and id (for validation, statistics and faults).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  loadReferenceDataDocument,
  type OperationId,
  type RequestInput,
  type ResponseBody,
  type RootName,
} from '../../refdata/index.ts';

export interface OperationRouteConfig {
  operationId: OperationId;
  root: RootName;
}

type Input<Op extends OperationId> = RequestInput<Op>;

/**
 * What a handler receives, after validation against the document (parameters coerced to
 * their types, query defaults filled in). Body members the document gives a default may
 * still be missing: configurations have to be merged before defaults apply.
 */
export interface OperationRequest<Op extends OperationId> {
  path: Input<Op> extends { path: infer Path }
    ? Path
    : Input<Op> extends { path?: infer Path }
      ? Path
      : never;
  query: Input<Op> extends { query?: infer Query } ? Query : never;
  body: Input<Op> extends { body: infer Body } ? (Body extends object ? Partial<Body> : Body) : never;
  /** X-Credential-Username, when the request carries one. */
  username: string | undefined;
  /** Who authenticated: the API key user, the OAuth client id or the basic user. */
  principal: string;
  requestId: string;
}

export type OperationHandler<Op extends OperationId> = (
  request: OperationRequest<Op>,
) => ResponseBody<Op> | Promise<ResponseBody<Op>>;

declare module 'fastify' {
  interface FastifyContextConfig {
    operation?: OperationRouteConfig;
  }
  interface FastifyRequest {
    /** Set by the validation hook: the request parts as validated. */
    validated?: { path: Record<string, unknown>; query: Record<string, unknown>; body: unknown };
    /** Set by the authentication hook. */
    principal?: string;
  }
}

/** `/extd/lookupjobs/{id}` to fastify's `/extd/lookupjobs/:id`. */
const fastifyPath = (template: string): string => template.replace(/\{([^}]+)\}/g, ':$1');

export function operationRoute<Op extends OperationId>(
  app: FastifyInstance,
  operationId: Op,
  handler: OperationHandler<Op>,
): void {
  const operation = loadReferenceDataDocument().operations.get(operationId);
  if (!operation) throw new RangeError(`the document has no operation ${operationId}`);
  app.route({
    method: operation.method,
    url: fastifyPath(operation.path),
    config: { operation: { operationId, root: operation.root } },
    handler: async (request: FastifyRequest) => handler(operationRequest<Op>(request)),
  });
}

function operationRequest<Op extends OperationId>(request: FastifyRequest): OperationRequest<Op> {
  const validated = request.validated ?? { path: {}, query: {}, body: undefined };
  const username = request.headers['x-credential-username'];
  return {
    path: validated.path,
    query: validated.query,
    body: validated.body,
    username: typeof username === 'string' ? username : undefined,
    principal: request.principal ?? 'anonymous',
    requestId: request.id,
  } as OperationRequest<Op>;
}
