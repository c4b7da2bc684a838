// Saved fetch and lookup configurations. The spec lists no create for lookup configurations;
// the sandbox seeds a few at start (see state/seed-configurations.ts).

import type { FastifyInstance } from 'fastify';
import { invalidRequest, notFound } from '../errors.ts';
import { operationRoute } from '../http/operation-route.ts';
import type { ConfigurationStore } from '../state/configuration-store.ts';
import type { SandboxState } from '../state/sandbox-state.ts';

/** The spec gives no default list page size; assumed. */
const DEFAULT_CONFIGURATION_PAGE_SIZE = 100;

interface ListQuery {
  startAfter?: string;
  limit?: number;
  defaultConfiguration?: boolean;
}

function listPage<Model>(store: ConfigurationStore<Model>, query: ListQuery) {
  const limit = query.limit ?? DEFAULT_CONFIGURATION_PAGE_SIZE;
  if (limit < 1) throw invalidRequest('query.limit', 'query.limit must be >= 1', 1);
  const page = store.list({ ...query, limit });
  if (!page)
    throw invalidRequest('query.startAfter', `no configuration ${query.startAfter} to continue after`);
  return page;
}

const found = <Value>(value: Value | undefined, what: string): Value => {
  if (value === undefined) throw notFound(what);
  return value;
};

export function registerConfigurationRoutes(app: FastifyInstance, state: SandboxState): void {
  const { fetch, lookup } = state.configurations;

  operationRoute(app, 'listFetchConfigurations', ({ query }) => listPage(fetch, query));
  operationRoute(app, 'createFetchConfiguration', ({ body, principal }) =>
    fetch.create(
      { name: body.name ?? '', configuration: body.configuration ?? {}, workspaceId: body.workspaceId },
      principal,
    ),
  );
  operationRoute(app, 'getFetchConfiguration', ({ path }) =>
    found(fetch.get(path.configurationId), `fetch configuration ${path.configurationId}`),
  );
  operationRoute(app, 'updateFetchConfiguration', ({ path, body, principal }) =>
    found(fetch.update(path.configurationId, body, principal), `fetch configuration ${path.configurationId}`),
  );
  operationRoute(app, 'deleteFetchConfiguration', ({ path }) =>
    found(fetch.delete(path.configurationId), `fetch configuration ${path.configurationId}`),
  );
  operationRoute(app, 'getFetchConfigurationVersion', ({ path }) =>
    found(
      fetch.version(path.configurationId, path.version),
      `version ${path.version} of fetch configuration ${path.configurationId}`,
    ),
  );

  operationRoute(app, 'listLookupConfigurations', ({ query }) => listPage(lookup, query));
  operationRoute(app, 'getLookupConfiguration', ({ path }) =>
    found(lookup.get(path.configurationId), `lookup configuration ${path.configurationId}`),
  );
  operationRoute(app, 'updateLookupConfiguration', ({ path, body, principal }) =>
    found(
      lookup.update(path.configurationId, body, principal),
      `lookup configuration ${path.configurationId}`,
    ),
  );
  operationRoute(app, 'deleteLookupConfiguration', ({ path }) =>
    found(lookup.delete(path.configurationId), `lookup configuration ${path.configurationId}`),
  );
  operationRoute(app, 'getLookupConfigurationVersion', ({ path }) =>
    found(
      lookup.version(path.configurationId, path.version),
      `version ${path.version} of lookup configuration ${path.configurationId}`,
    ),
  );
}
