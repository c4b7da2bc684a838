// Lookup features (spec, "Lookup feature") and which data sources they switch on.

export const LOOKUP_FEATURES = [
  'ACTIVATE_IDENTIFIER_ONLY_MATCH',
  'ACTIVATE_DATASOURCE_SVC_POOL',
  'ACTIVATE_DATASOURCE_CDL',
  'ACTIVATE_DATASOURCE_BZST',
  'ACTIVATE_DATASOURCE_VIES_FOR_ES',
  'ACTIVATE_DATASOURCE_GEOPLACES',
  'ACTIVATE_DATASOURCE_STORAGES',
  'ACTIVATE_DATASOURCE_EXTD',
  'ACTIVATE_DATASOURCE_EXTB',
  'ACTIVATE_DATASOURCE_NLBR',
] as const;

export type LookupFeature = (typeof LOOKUP_FEATURES)[number];

/** Deprecated feature names and the feature that replaced them. */
const FEATURE_ALIASES: Readonly<Partial<Record<LookupFeature, LookupFeature>>> = {
  ACTIVATE_DATASOURCE_CDL: 'ACTIVATE_DATASOURCE_SVC_POOL',
};

/**
 * The features in effect: `featuresOn` minus `featuresOff`, deprecated names replaced by
 * their successors (switching either name off switches the feature off).
 */
export function activeFeatures(
  featuresOn: readonly LookupFeature[],
  featuresOff: readonly LookupFeature[],
): ReadonlySet<LookupFeature> {
  const canonical = (feature: LookupFeature): LookupFeature => FEATURE_ALIASES[feature] ?? feature;
  const off = new Set(featuresOff.map(canonical));
  return new Set(featuresOn.map(canonical).filter((feature) => !off.has(feature)));
}

/** How a data source is reached in lookups. */
export interface DataSourceAccess {
  readonly id: string;
  /** Feature that adds the source to lookups; undefined when the source is on by default. */
  readonly activatedBy: LookupFeature | undefined;
}
