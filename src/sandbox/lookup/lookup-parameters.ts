// The parameters a lookup runs with: the request's members, over the named lookup
// configuration's (override rule), over the document's defaults.

import type { Schemas } from '../../refdata/index.ts';
import { documentDefaults, withDefaults } from '../http/document-defaults.ts';
import type { MatchingClassificationRule } from '../matching/classification.ts';
import type { LookupFeature } from '../matching/features.ts';
import type { LookupOptionsInput } from '../matching/options.ts';
import type { ConfigurationStore } from '../state/configuration-store.ts';
import { applyConfiguration, requireConfiguration } from './configuration-override.ts';

type LookupConfigurationModel = Schemas['LookupConfigurationModel'];
type StorageDataSources = Schemas['StorageDataSources'];

export interface LookupParameters {
  limit: number;
  startAfter?: string | undefined;
  dataSources: string[];
  matchingThreshold: number;
  maxCandidates: number;
  storagesDataSources: StorageDataSources[];
  featuresOn: LookupFeature[];
  featuresOff: LookupFeature[];
  matchingClassifications: MatchingClassificationRule[];
  configurationId?: string | undefined;
}

/** The members a v4 lookup or a bulk shares with a lookup configuration. */
export type LookupRequestMembers = Partial<Omit<Schemas['LookupRequestV4'], 'businessPartner'>>;

const OVERRIDABLE = [
  'limit',
  'dataSources',
  'matchingThreshold',
  'maxCandidates',
  'storagesDataSources',
  'matchingClassifications',
] as const;

export function resolveLookupParameters(
  operationId: 'lookupBusinessPartnersV4' | 'createBulkLookup',
  request: LookupRequestMembers,
  configurations: ConfigurationStore<LookupConfigurationModel>,
): LookupParameters {
  let merged: LookupRequestMembers & { matchingClassifications?: MatchingClassificationRule[] } = request;
  if (request.configurationId !== undefined) {
    const { configuration } = requireConfiguration(
      configurations.get(request.configurationId),
      request.configurationId,
    );
    // The configuration's single `dataSource` counts as a one-item filter when it has no list.
    const dataSources =
      configuration.dataSources ?? (configuration.dataSource ? [configuration.dataSource] : undefined);
    merged = applyConfiguration(merged, { ...configuration, dataSources }, OVERRIDABLE);
  }
  const withDefaultValues = withDefaults(merged, documentDefaults(operationId).body);
  return {
    limit: withDefaultValues.limit ?? 0,
    startAfter: withDefaultValues.startAfter,
    dataSources: withDefaultValues.dataSources ?? [],
    matchingThreshold: withDefaultValues.matchingThreshold ?? 0,
    maxCandidates: withDefaultValues.maxCandidates ?? 0,
    storagesDataSources: withDefaultValues.storagesDataSources ?? [],
    featuresOn: withDefaultValues.featuresOn ?? [],
    featuresOff: withDefaultValues.featuresOff ?? [],
    matchingClassifications: withDefaultValues.matchingClassifications ?? [],
    configurationId: request.configurationId,
  };
}

/** The matcher's options; storages without an id name nothing and are left out. */
export function matcherOptions(parameters: LookupParameters): LookupOptionsInput {
  return {
    limit: parameters.limit,
    ...(parameters.startAfter === undefined ? {} : { startAfter: parameters.startAfter }),
    dataSources: parameters.dataSources,
    matchingThreshold: parameters.matchingThreshold,
    maxCandidates: parameters.maxCandidates,
    storagesDataSources: parameters.storagesDataSources.flatMap((entry) =>
      entry.storageId === undefined
        ? []
        : [{ storageId: entry.storageId, dataSources: entry.dataSources ?? [] }],
    ),
    featuresOn: parameters.featuresOn,
    featuresOff: parameters.featuresOff,
  };
}
