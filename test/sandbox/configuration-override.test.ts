import { describe, expect, it } from 'vitest';
import { applyConfiguration, mergeFeatures } from '../../src/sandbox/lookup/configuration-override.ts';

describe('the configuration override rule', () => {
  it('merges features, the request winning where it switches one the other way', () => {
    expect(
      mergeFeatures(
        { featuresOn: ['A', 'B'], featuresOff: ['C'] },
        { featuresOn: ['C'], featuresOff: ['B'] },
      ),
    ).toEqual({
      featuresOn: ['A', 'C'],
      featuresOff: ['B'],
    });
  });

  it('takes the configuration value only where the request leaves the member out', () => {
    const merged = applyConfiguration(
      { limit: 5, matchingThreshold: undefined as number | undefined, featuresOn: ['X'] },
      { limit: 50, matchingThreshold: 0.9, featuresOn: ['Y'] },
      ['limit', 'matchingThreshold'],
    );
    expect(merged).toEqual({ limit: 5, matchingThreshold: 0.9, featuresOn: ['Y', 'X'], featuresOff: [] });
  });
});
