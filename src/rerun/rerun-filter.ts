// Which stored partners a rerun chooses, read from what the partner state keeps of each.
import type { StoredPartner } from '../pipeline/outputs.ts';
import type { RerunFilter } from './rerun-job.ts';

export function chooses(filter: RerunFilter, stored: StoredPartner): boolean {
  const { countries, sourceSystems, outcomes, notLookedUpSince } = filter;
  if (
    countries?.length &&
    !stored.record.addresses.some((a) => a.country !== null && countries.includes(a.country))
  )
    return false;
  if (sourceSystems?.length && !sourceSystems.includes(stored.record.sourceSystem)) return false;
  if (outcomes?.length && !outcomes.includes(stored.outcome)) return false;
  if (notLookedUpSince !== undefined && stored.matchedAt >= notLookedUpSince) return false;
  return true;
}
