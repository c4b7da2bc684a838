import { describe, expect, it } from 'vitest';
import { parseQuotaReset } from '../../src/refdata/quota-reset.ts';

describe('quota reset intervals', () => {
  it.each([
    ['PT1M', 60_000],
    ['PT1H30M', 5_400_000],
    ['P1D', 86_400_000],
    ['P1W', 604_800_000],
    ['PT0.5S', 500],
    ['60', 60_000],
    ['pt1m', 60_000],
  ])('reads %s as %d ms', (reset, ms) => {
    expect(parseQuotaReset(reset)).toBe(ms);
  });

  it.each(['P1M', 'P1Y', 'P', 'PT', 'PT0S', '0', '1 minute', ''])('refuses %j', (reset) => {
    expect(parseQuotaReset(reset)).toBeUndefined();
  });
});
