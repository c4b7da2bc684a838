import { austria } from './austria.ts';
import type { CountryCode, CountryProfile } from './country-profile.ts';
import { france } from './france.ts';
import { germany } from './germany.ts';
import { italy } from './italy.ts';
import { netherlands } from './netherlands.ts';
import { poland } from './poland.ts';
import { spain } from './spain.ts';
import { switzerland } from './switzerland.ts';
import { unitedKingdom } from './united-kingdom.ts';
import { unitedStates } from './united-states.ts';

export type { CountryCode, CountryProfile, LegalFormSpec, TownSpec } from './country-profile.ts';
export { COUNTRY_CODES } from './country-profile.ts';

export const COUNTRY_PROFILES: readonly CountryProfile[] = [
  germany,
  france,
  unitedKingdom,
  unitedStates,
  netherlands,
  spain,
  italy,
  switzerland,
  austria,
  poland,
];

const BY_CODE = new Map<CountryCode, CountryProfile>(
  COUNTRY_PROFILES.map((profile) => [profile.code, profile]),
);

export function countryProfile(code: CountryCode): CountryProfile {
  const profile = BY_CODE.get(code);
  if (profile === undefined) throw new RangeError(`no country profile for ${code}`);
  return profile;
}
