import { COUNTRY_PROFILES } from '../../src/sandbox/dataset/countries/index.ts';
import type { SandboxDataset } from '../../src/sandbox/dataset/dataset.ts';
import { UniqueIdentifiers } from '../../src/sandbox/dataset/identifiers.ts';
import type { Organization } from '../../src/sandbox/dataset/organizations.ts';
import { OrganizationFactory } from '../../src/sandbox/dataset/organizations.ts';
import { Random } from '../../src/sandbox/dataset/random.ts';
import { normalizeIdentifier, normalizeName } from '../../src/sandbox/matching/profile.ts';
import type { NoisyQuery } from './noise.ts';
import { noisyQuery } from './noise.ts';

const nameKey = (country: string, name: string): string =>
  `${country}:${[...normalizeName(name).tokens].sort().join(' ')}`;

/**
 * Organizations generated like the dataset's but absent from it: a different seed, and none
 * whose name the matcher could not tell from a dataset organization's (that organization
 * would be the right answer) or that shares an identifier with one.
 */
function absentOrganizations(dataset: SandboxDataset, count: number, seed: number): Organization[] {
  const taken = new Set(dataset.organizations.map((org) => nameKey(org.country, org.name)));
  const random = new Random(seed);
  const factory = new OrganizationFactory(random, new UniqueIdentifiers());
  const absent: Organization[] = [];
  for (let index = 0; absent.length < count; index++) {
    const { organization } = factory.create(random.weighted(COUNTRY_PROFILES), index);
    const known = organization.identifiers.some(
      (identifier) => dataset.matchIndex.identifierPostings(normalizeIdentifier(identifier)) !== undefined,
    );
    if (!known && !taken.has(nameKey(organization.country, organization.name))) absent.push(organization);
  }
  return absent;
}

export interface QuerySetOptions {
  readonly queries: number;
  /** Share of queries for organizations outside the dataset, 0..1. */
  readonly absentShare: number;
  readonly seed: number;
}

/** Noisy queries with ground truth: most for random dataset organizations, some for absent ones. */
export function buildQuerySet(dataset: SandboxDataset, options: QuerySetOptions): NoisyQuery[] {
  const random = new Random(options.seed);
  const absentCount = Math.round(options.queries * options.absentShare);
  const queries: NoisyQuery[] = [];
  for (let i = 0; i < options.queries - absentCount; i++) {
    const org = random.pick(dataset.organizations);
    queries.push(noisyQuery(org, org.index, random));
  }
  for (const org of absentOrganizations(dataset, absentCount, options.seed + 1)) {
    queries.push(noisyQuery(org, undefined, random));
  }
  return queries;
}
