// The override rule of the spec: when a request names a configuration, the request's own
// values override the configuration's, except features, which are merged. Where the request
// switches a feature on that the configuration switches off (or the reverse), the request wins.

import { invalidRequest } from '../errors.ts';

interface WithFeatures<Feature> {
  featuresOn?: Feature[] | undefined;
  featuresOff?: Feature[] | undefined;
}

export function mergeFeatures<Feature>(
  configuration: WithFeatures<Feature>,
  request: WithFeatures<Feature>,
): { featuresOn: Feature[]; featuresOff: Feature[] } {
  const requestOn = request.featuresOn ?? [];
  const requestOff = request.featuresOff ?? [];
  const union = (a: Feature[], b: Feature[]): Feature[] => [...new Set([...a, ...b])];
  return {
    featuresOn: union(
      (configuration.featuresOn ?? []).filter((f) => !requestOff.includes(f)),
      requestOn,
    ),
    featuresOff: union(
      (configuration.featuresOff ?? []).filter((f) => !requestOn.includes(f)),
      requestOff,
    ),
  };
}

/**
 * `request` over `configuration` for the `overridable` members, features merged. Members the
 * request leaves undefined take the configuration's value.
 */
export function applyConfiguration<Request extends WithFeatures<Feature>, Feature>(
  request: Request,
  configuration: Partial<Record<keyof Request, unknown>> & WithFeatures<Feature>,
  overridable: readonly (keyof Request)[],
): Request {
  const merged: Request = { ...request };
  for (const member of overridable) {
    if (merged[member] === undefined && configuration[member] !== undefined) {
      merged[member] = structuredClone(configuration[member]) as Request[typeof member];
    }
  }
  return { ...merged, ...mergeFeatures(configuration, request) };
}

/** Throws the 400 a request gets for a configurationId that names no configuration. */
export function requireConfiguration<Model>(found: Model | undefined, configurationId: string): Model {
  if (found === undefined) {
    throw invalidRequest('body.configurationId', `no configuration ${configurationId}`);
  }
  return found;
}
