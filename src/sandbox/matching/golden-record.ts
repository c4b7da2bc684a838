import { normalizeSubject, profileCompleteness } from './profile.ts';
import type { MatchSubject } from './subject.ts';

export interface GoldenRecordCandidate {
  readonly svcId: string;
  readonly score: number;
  readonly completeness: number;
  /** Records with equal keys describe the same organization. */
  readonly entityKey: number;
}

/**
 * The golden record of a lookup: among the candidates that describe the best match's
 * organization, the most complete one (share of filled fields, see profileCompleteness);
 * ties go to the higher score, then the smaller svcId. `ranked` is sorted best first.
 */
export function chooseGoldenRecord<T extends GoldenRecordCandidate>(ranked: readonly T[]): T | undefined {
  const best = ranked[0];
  if (best === undefined) return undefined;
  let golden = best;
  for (const candidate of ranked) {
    if (candidate.entityKey !== best.entityKey) continue;
    const better =
      candidate.completeness > golden.completeness ||
      (candidate.completeness === golden.completeness && candidate.score > golden.score);
    if (better) golden = candidate;
  }
  return golden;
}

/**
 * Golden record of a free set of records (the goldenrecord operation): the most complete,
 * first one on ties. Returns its position in `records`, or -1 for an empty list.
 */
export function mostCompleteRecord(records: readonly MatchSubject[]): number {
  let chosen = -1;
  let chosenCompleteness = -1;
  records.forEach((record, i) => {
    const completeness = profileCompleteness(normalizeSubject(record));
    if (completeness > chosenCompleteness) [chosen, chosenCompleteness] = [i, completeness];
  });
  return chosen;
}
