// Figures over repeated runs: every figure is reported as the median of its runs, with the
// smallest and largest; latencies as percentiles of one run's samples.

export interface Spread {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

export function spread(values: readonly number[]): Spread {
  if (values.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, runs: [] };
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1
      ? (sorted[middle] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted.at(-1) as number, runs: [...values] };
}

/** Nearest-rank percentile (p in 0..100) of already sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

const digits = (value: number): number => (Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2);

/** "1234 (1200-1300)": median with min and max. */
export function formatSpread(s: Spread, unit = ''): string {
  const f = (v: number) => v.toFixed(digits(s.median));
  return `${f(s.median)}${unit} (${f(s.min)}-${f(s.max)})`;
}
