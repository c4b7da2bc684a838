import { describe, expect, it } from 'vitest';
import {
  classifyMatch,
  DEFAULT_MATCH_THRESHOLDS,
  thresholdsFor,
} from '../../src/sandbox/matching/classification.ts';

describe('classifyMatch', () => {
  it('classifies the best score against the full-match and maybe-match thresholds', () => {
    const thresholds = { fullMatch: 0.9, maybeMatch: 0.6 };
    expect(classifyMatch(0.95, thresholds)).toBe('MATCH');
    expect(classifyMatch(0.9, thresholds)).toBe('MATCH');
    expect(classifyMatch(0.7, thresholds)).toBe('MAYBE_MATCH');
    expect(classifyMatch(0.6, thresholds)).toBe('MAYBE_MATCH');
    expect(classifyMatch(0.59, thresholds)).toBe('NO_MATCH');
  });

  it('classifies a lookup without candidates as NO_MATCH', () => {
    expect(classifyMatch(undefined)).toBe('NO_MATCH');
  });

  it('uses the measured defaults when no thresholds are given', () => {
    expect(classifyMatch(DEFAULT_MATCH_THRESHOLDS.fullMatch)).toBe('MATCH');
    expect(classifyMatch(DEFAULT_MATCH_THRESHOLDS.maybeMatch)).toBe('MAYBE_MATCH');
  });
});

describe('thresholdsFor', () => {
  const rules = [
    {
      countryScope: { shortNames: ['DE', 'AT'] },
      businessPartnerThreshold: { fullMatch: 0.95, maybeMatch: 0.7 },
    },
    { businessPartnerThreshold: { fullMatch: 0.9 } },
  ];

  it("takes the rule whose country scope names the query's country", () => {
    expect(thresholdsFor('AT', rules)).toEqual({ fullMatch: 0.95, maybeMatch: 0.7 });
  });

  it('falls back to the rule without scope, completing it with the defaults', () => {
    expect(thresholdsFor('FR', rules)).toEqual({
      fullMatch: 0.9,
      maybeMatch: DEFAULT_MATCH_THRESHOLDS.maybeMatch,
    });
    expect(thresholdsFor(undefined, rules)).toEqual({
      fullMatch: 0.9,
      maybeMatch: DEFAULT_MATCH_THRESHOLDS.maybeMatch,
    });
  });

  it('uses the defaults without rules', () => {
    expect(thresholdsFor('DE')).toEqual(DEFAULT_MATCH_THRESHOLDS);
  });
});
