// The sandbox as a fastify application: every operation of the OpenAPI document on one
// address (the five roots share no path), plus the admin routes. Each API request passes, in
// order: counting, injected faults (a reset ends it there), authentication (onRequest), then validation against the
// document (preHandler, once the body is parsed), then its handler; its answer, error or not,
// is checked against the document (preSerialization) unless `validateResponses` is off.

import Fastify, { type FastifyInstance } from 'fastify';
import { Authentication } from './http/authentication.ts';
import { replyNotFound, replyUnreadablePath, replyWithError } from './http/error-reply.ts';
import { applyRequestFaults } from './http/fault-injection.ts';
import { validateRequest } from './http/request-validation.ts';
import { validateResponse } from './http/response-validation.ts';
import { resolveSandboxOptions, type ResolvedSandboxOptions, type SandboxOptions } from './options.ts';
import { registerAdminRoutes } from './routes/admin.ts';
import { registerAuthRoutes } from './routes/auth.ts';
import { registerBulkLookupRoutes } from './routes/bulk-lookups.ts';
import { registerConfigurationRoutes } from './routes/configurations.ts';
import { registerEventStoreJobRoutes } from './routes/event-store-jobs.ts';
import { registerExtdFetchRoutes } from './routes/extd-fetch.ts';
import { registerExtdLookupJobRoutes } from './routes/extd-lookup-jobs.ts';
import { registerFetchRoutes } from './routes/fetch.ts';
import { registerLookupV3Routes } from './routes/lookup-v3.ts';
import { registerLookupV4Routes } from './routes/lookup-v4.ts';
import { registerOverlapLogRoutes } from './routes/overlap-logs.ts';
import { registerQuotaUsageRoutes } from './routes/quota-usage.ts';
import { registerRateLimitQuotaRoutes } from './routes/rate-limit-quotas.ts';
import { registerRelationRoutes } from './routes/relations.ts';
import { registerSearchRoutes } from './routes/search.ts';
import { registerSupplierGatewayRoutes } from './routes/supplier-gateway.ts';
import { SandboxState } from './state/sandbox-state.ts';

export interface SandboxApp {
  /** Not listening yet: use `app.inject()`, or startSandbox for a real port. */
  app: FastifyInstance;
  state: SandboxState;
  options: Readonly<ResolvedSandboxOptions>;
}

export function buildSandboxApp(sandboxOptions: SandboxOptions = {}): SandboxApp {
  const options = resolveSandboxOptions(sandboxOptions);
  const state = new SandboxState(options);
  const authentication = new Authentication(options, state.tokens, state.faults);
  const app = Fastify({
    logger: options.logger,
    bodyLimit: options.bodyLimitBytes,
    // Fastify's router answered a path parameter over 100 characters (a long storage id) and a
    // path that is not valid percent-encoding by itself: 414 and 400 bodies of its own, without
    // the ErrorBody's code and request id, before authentication. A long id is now the route's
    // to answer (an unknown one: 404).
    routerOptions: { maxParamLength: 10_000 },
    frameworkErrors: replyUnreadablePath,
  });

  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    },
  );
  app.addHook('onRequest', async (request, reply) => {
    const operation = request.routeOptions.config.operation;
    if (!operation) return;
    state.stats.countRequest(operation.operationId);
    await applyRequestFaults(state.faults, state.stats, request, reply);
    if (reply.sent) return;
    request.principal = authentication.check(operation.root, request);
  });
  app.addHook('preHandler', validateRequest);
  // Frozen requests wait here, the last step before their handler: handlers change state
  // without awaiting anything, so nothing is processed once the freeze is in force.
  app.addHook('preHandler', async (request) => {
    if (request.routeOptions.config.operation) await state.faults.unfrozen();
  });
  // Attached per operation route as it is registered, so admin routes (outside the document)
  // carry no hook at all.
  app.addHook('onRoute', (route) => {
    if (!options.validateResponses || route.config?.operation === undefined) return;
    route.preSerialization = [route.preSerialization ?? [], validateResponse].flat();
  });
  app.addHook('onClose', async () => state.close());
  app.setErrorHandler(replyWithError);
  app.setNotFoundHandler(replyNotFound);

  registerAuthRoutes(app, state);
  registerFetchRoutes(app, state, options);
  registerRelationRoutes(app, state);
  registerLookupV3Routes(app, state);
  registerLookupV4Routes(app, state);
  registerSearchRoutes(app, state);
  registerBulkLookupRoutes(app, state, options);
  registerSupplierGatewayRoutes(app, state);
  registerExtdFetchRoutes(app, state);
  registerExtdLookupJobRoutes(app, state, options);
  registerConfigurationRoutes(app, state);
  registerOverlapLogRoutes(app, state);
  registerEventStoreJobRoutes(app, state, options);
  registerRateLimitQuotaRoutes(app, state, options);
  registerQuotaUsageRoutes(app, state, options);
  registerAdminRoutes(app, state);
  return { app, state, options };
}
