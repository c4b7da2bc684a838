import type { ProfiledRecord } from '../matching/build-match-index.ts';
import { buildMatchIndexFromProfiles } from '../matching/build-match-index.ts';
import type { MatchIndex } from '../matching/match-index.ts';
import { COUNTRY_PROFILES } from './countries/index.ts';
import type { DataSource } from './data-sources.ts';
import { DATA_SOURCES } from './data-sources.ts';
import { SandboxDatasetError } from './errors.ts';
import { providerIdentifier, UniqueIdentifiers } from './identifiers.ts';
import type { Organization } from './organizations.ts';
import { OrganizationFactory } from './organizations.ts';
import { itemAt, Random } from './random.ts';
import type { RecordContent, SourceRecord } from './records.ts';
import type { OrganizationProfile } from './record-profiles.ts';
import { organizationProfile, recordProfile } from './record-profiles.ts';
import { recordContent, toBusinessPartner } from './records.ts';
import type { PartnerRelation } from './relations.ts';
import { OwnershipGraph } from './relations.ts';
import { chooseSources, omittedFields } from './source-assignment.ts';
import { svcIdValue } from './svc-ids.ts';

export type { Organization } from './organizations.ts';

export interface DatasetOptions {
  readonly organizations: number;
  readonly seed: number;
}

export interface SandboxDataset {
  readonly seed: number;
  readonly organizations: readonly Organization[];
  readonly dataSources: readonly DataSource[];
  readonly recordCount: number;
  /** Blocking structures for the matcher; record indexes are the dataset's. */
  readonly matchIndex: MatchIndex;
  /** O(1); built on each call from the organization's facts. */
  getRecord(svcId: string): SourceRecord | undefined;
  recordAt(recordIndex: number): SourceRecord;
  organizationOf(svcId: string): Organization | undefined;
  relationsOf(svcId: string): PartnerRelation[] | undefined;
}

const MAX_ORGANIZATIONS = 2_000_000;
const MAX_SOURCES_PER_ORGANIZATION = 4;
const UPDATED_FROM = Date.UTC(2023, 0, 1) / 1000;
const UPDATED_SPAN = 900 * 86_400;

function validate(options: DatasetOptions): void {
  const { organizations, seed } = options;
  if (!Number.isInteger(organizations) || organizations < 1 || organizations > MAX_ORGANIZATIONS) {
    throw new SandboxDatasetError(
      'SANDBOX_INVALID_DATASET_OPTIONS',
      `organizations must be an integer in 1..${MAX_ORGANIZATIONS}`,
      {
        details: { organizations },
      },
    );
  }
  if (!Number.isInteger(seed)) {
    throw new SandboxDatasetError('SANDBOX_INVALID_DATASET_OPTIONS', 'seed must be an integer', {
      details: { seed },
    });
  }
}

/**
 * Generates `organizations` organizations and their source records; the same seed gives the
 * same dataset. Organizations are generated up front (facts only); records are materialised
 * when asked for, so 100,000 organizations take a few hundred megabytes less than eager records.
 */
export function generateDataset(options: DatasetOptions): SandboxDataset {
  validate(options);
  const random = new Random(options.seed);
  const unique = new UniqueIdentifiers();
  const factory = new OrganizationFactory(random, unique);
  const capacity = options.organizations * MAX_SOURCES_PER_ORGANIZATION;
  const recordOrg = new Int32Array(capacity);
  const recordSource = new Uint8Array(capacity);
  const recordOmitted = new Uint8Array(capacity);
  const recordUpdatedAt = new Uint32Array(capacity);
  const svcIds: string[] = [];
  const organizations: Organization[] = [];
  const counters = new Map<string, number>();
  const profiles: OrganizationProfile[] = [];

  for (let index = 0; index < options.organizations; index++) {
    const draft = factory.create(random.weighted(COUNTRY_PROFILES), index);
    const org = draft.organization;
    const sources = chooseSources(org, random);
    for (const provider of ['EXTD', 'EXTB'] as const) {
      if (sources.some((source) => source.id === provider)) {
        draft.identifiers.push(providerIdentifier(provider, org.country, random, unique));
      }
    }
    for (const source of sources) {
      const counter = (counters.get(source.id) ?? 0) + 1;
      counters.set(source.id, counter);
      const record = svcIds.length;
      const svcId = `${source.prefix}:${svcIdValue(source, org, index, counter)}`;
      svcIds.push(svcId);
      draft.svcIds.push(svcId);
      recordOrg[record] = index;
      recordSource[record] = DATA_SOURCES.indexOf(source);
      recordOmitted[record] = omittedFields(source, random);
      recordUpdatedAt[record] = UPDATED_FROM + random.int(UPDATED_SPAN);
    }
    organizations.push(org);
    profiles.push(organizationProfile(org, draft.coreName));
  }

  const recordCount = svcIds.length;
  const sourceOf = (record: number): DataSource => itemAt(DATA_SOURCES, recordSource[record] ?? 0);
  const orgOf = (record: number): Organization => itemAt(organizations, recordOrg[record] ?? 0);
  const contentOf = (record: number): RecordContent =>
    recordContent(orgOf(record), sourceOf(record), recordOmitted[record] ?? 0);

  function* profiledRecords(): Generator<ProfiledRecord> {
    for (let record = 0; record < recordCount; record++) {
      const source = sourceOf(record);
      const org = recordOrg[record] ?? 0;
      yield {
        svcId: svcIds[record] ?? '',
        dataSourceId: source.id,
        storageId: source.storageId,
        entityKey: org,
        profile: recordProfile(itemAt(profiles, org), source, recordOmitted[record] ?? 0),
      };
    }
  }
  const matchIndex = buildMatchIndexFromProfiles(profiledRecords(), DATA_SOURCES);
  const foundedAt = organizations.map((org) => Date.parse(org.foundedOn) / 1000);
  const ownership = new OwnershipGraph(foundedAt, random);

  function recordAt(record: number): SourceRecord {
    if (!Number.isInteger(record) || record < 0 || record >= recordCount) {
      throw new RangeError(`no record at ${record}; the dataset has ${recordCount}`);
    }
    const source = sourceOf(record);
    return {
      svcId: svcIds[record] ?? '',
      dataSource: { id: source.id, name: source.name, category: source.category, prefix: source.prefix },
      ...(source.storageId === undefined ? {} : { storageId: source.storageId }),
      lastUpdatedAt: new Date((recordUpdatedAt[record] ?? 0) * 1000).toISOString(),
      businessPartner: toBusinessPartner(contentOf(record)),
    };
  }
  const orgBySvcId = (svcId: string): Organization | undefined => {
    const record = matchIndex.recordIndexOf(svcId);
    return record === undefined ? undefined : orgOf(record);
  };

  return {
    seed: options.seed,
    organizations,
    dataSources: DATA_SOURCES,
    recordCount,
    matchIndex,
    recordAt,
    getRecord: (svcId) => {
      const record = matchIndex.recordIndexOf(svcId);
      return record === undefined ? undefined : recordAt(record);
    },
    organizationOf: orgBySvcId,
    relationsOf: (svcId) => {
      const org = orgBySvcId(svcId);
      return org === undefined
        ? undefined
        : ownership.relationsOf(org.index, (related) => organizations[related]?.svcIds[0] ?? '');
    },
  };
}
