// Configurations present at start. The spec has no operation to create a lookup configuration,
// so a few useful ones are seeded (listed in docs/SANDBOX.md); fetch configurations can be
// created, and one default is seeded so `defaultConfiguration=true` finds one.

import type { Schemas } from '../../refdata/index.ts';
import type { ConfigurationStore, NewConfiguration } from './configuration-store.ts';

const SEED_USER = 'sandbox';

export const SEEDED_LOOKUP_CONFIGURATIONS: readonly NewConfiguration<Schemas['LookupConfigurationModel']>[] =
  [
    {
      id: 'lookup-default',
      name: 'Default lookup',
      isDefault: true,
      configuration: {
        limit: 10,
        matchingThreshold: 0.5,
        maxCandidates: 50,
        featuresOn: [],
        featuresOff: [],
      },
    },
    {
      id: 'lookup-identifier-only',
      name: 'Identifier only',
      configuration: { featuresOn: ['ACTIVATE_IDENTIFIER_ONLY_MATCH'], matchingThreshold: 0.8 },
    },
    {
      id: 'lookup-all-sources',
      name: 'All data sources',
      configuration: {
        limit: 25,
        maxCandidates: 100,
        featuresOn: [
          'ACTIVATE_DATASOURCE_EXTD',
          'ACTIVATE_DATASOURCE_EXTB',
          'ACTIVATE_DATASOURCE_SVC_POOL',
          'ACTIVATE_DATASOURCE_GEOPLACES',
          'ACTIVATE_DATASOURCE_STORAGES',
        ],
      },
    },
    {
      id: 'lookup-strict',
      name: 'Strict matching',
      configuration: {
        matchingThreshold: 0.85,
        matchingClassifications: [{ businessPartnerThreshold: { fullMatch: 0.95, maybeMatch: 0.85 } }],
      },
    },
  ];

export const SEEDED_FETCH_CONFIGURATIONS: readonly NewConfiguration<Schemas['FetchConfigurationModel']>[] = [
  {
    id: 'fetch-default',
    name: 'Default fetch',
    isDefault: true,
    configuration: { featuresOn: [], featuresOff: [] },
  },
];

export function seedConfigurations<Model>(
  store: ConfigurationStore<Model>,
  seeds: readonly NewConfiguration<Model>[],
) {
  for (const seed of seeds) store.create(seed, SEED_USER);
}
