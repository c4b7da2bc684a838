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
 * Defaults chosen with bench/matching/quality.ts (100,000 organizations, 4,000 noisy queries,
 * 10% of them for absent organizations): from 0.8 up, 99.9% of best matches are the right
 * organization and 0.5% of absent organizations get one; from 0.6 up, 1.3% of them do. A
 * lookup still returns candidates from its matchingThreshold (0.5 by default) up.
 */
export const DEFAULT_MATCH_THRESHOLDS: MatchThresholds = { fullMatch: 0.8, maybeMatch: 0.6 };

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

/**
 * A score moved across the MATCH / MAYBE_MATCH boundary. Down, [maybeMatch, 1] shrinks
 * linearly into [maybeMatch, fullMatch); up, [maybeMatch, fullMatch) stretches linearly onto
 * [fullMatch, 1]. Both keep the order of the scores they move, so the records of one
 * organization keep their order. Scores below maybeMatch, and any score when the thresholds
 * leave no MAYBE_MATCH band, stay.
 */
export function acrossMatchThreshold(
  score: number,
  thresholds: MatchThresholds,
  direction: 'down' | 'up',
): number {
  const { fullMatch, maybeMatch } = thresholds;
  const band = fullMatch - maybeMatch;
  if (band <= 0 || score < maybeMatch) return score;
  if (direction === 'up')
    return score < fullMatch ? fullMatch + ((score - maybeMatch) * (1 - fullMatch)) / band : score;
  // A score of 1 would land on fullMatch itself, still a MATCH: stay a step (of four decimals) below.
  return Math.min(maybeMatch + ((score - maybeMatch) * band) / (1 - maybeMatch), fullMatch - 0.0001);
}
