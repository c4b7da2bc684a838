// MATCH / MAYBE_MATCH / NO_MATCH from the best score, with the thresholds of the spec's
// lookup configuration (matchingClassifications[].businessPartnerThreshold).

export type MatchClassification = 'MATCH' | 'MAYBE_MATCH' | 'NO_MATCH';

export interface MatchThresholds {
  readonly fullMatch: number;
  readonly maybeMatch: number;
}

export interface MatchingClassificationRule {
  readonly countryScope?: { readonly shortNames?: readonly string[] };
  readonly businessPartnerThreshold?: Partial<MatchThresholds>;
}

/**
 * Defaults chosen with bench/matching/quality.ts: at 0.85 nearly every best match is the
 * right organization; 0.5 is the spec's default matching threshold, below which a lookup
 * returns no candidate at all.
 */
export const DEFAULT_MATCH_THRESHOLDS: MatchThresholds = { fullMatch: 0.85, maybeMatch: 0.5 };

export function classifyMatch(
  bestScore: number | undefined,
  thresholds: MatchThresholds = DEFAULT_MATCH_THRESHOLDS,
): MatchClassification {
  if (bestScore === undefined) return 'NO_MATCH';
  if (bestScore >= thresholds.fullMatch) return 'MATCH';
  return bestScore >= thresholds.maybeMatch ? 'MAYBE_MATCH' : 'NO_MATCH';
}

/**
 * Thresholds for a country: the first rule whose scope names it, else the first rule without
 * a scope, else the defaults. Thresholds a rule leaves out come from the defaults.
 */
export function thresholdsFor(
  country: string | undefined,
  rules: readonly MatchingClassificationRule[] = [],
): MatchThresholds {
  const scoped = rules.find(
    (rule) => country !== undefined && rule.countryScope?.shortNames?.includes(country),
  );
  const rule = scoped ?? rules.find((candidate) => (candidate.countryScope?.shortNames ?? []).length === 0);
  const given = rule?.businessPartnerThreshold;
  return {
    fullMatch: given?.fullMatch ?? DEFAULT_MATCH_THRESHOLDS.fullMatch,
    maybeMatch: given?.maybeMatch ?? DEFAULT_MATCH_THRESHOLDS.maybeMatch,
  };
}
