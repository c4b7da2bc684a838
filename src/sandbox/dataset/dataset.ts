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
import type { OrganizationProfile } from './record-profiles.ts';
import { organizationProfile, recordProfile } from './record-profiles.ts';
import { RecordTable } from './record-table.ts';
import type { SourceRecord } from './records.ts';
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
  /** Blocking structures for the matcher; its record indexes are the dataset's. */
  readonly matchIndex: MatchIndex;
  /** O(1); the record is built on each call from its organization's facts. */
  getRecord(svcId: string): SourceRecord | undefined;
  recordAt(recordIndex: number): SourceRecord;
  organizationOf(svcId: string): Organization | undefined;
  relationsOf(svcId: string): PartnerRelation[] | undefined;
}

const MAX_ORGANIZATIONS = 2_000_000;
const MAX_SOURCES_PER_ORGANIZATION = 4;
/** Records were last updated within this many seconds after 2023-01-01. */
const UPDATED_SPAN = 900 * 86_400;

function validate({ organizations, seed }: DatasetOptions): void {
  if (!Number.isInteger(organizations) || organizations < 1 || organizations > MAX_ORGANIZATIONS) {
    const message = `organizations must be an integer in 1..${MAX_ORGANIZATIONS}`;
    throw new SandboxDatasetError('SANDBOX_INVALID_DATASET_OPTIONS', message, { details: { organizations } });
  }
  if (!Number.isInteger(seed)) {
    const message = 'seed must be an integer';
    throw new SandboxDatasetError('SANDBOX_INVALID_DATASET_OPTIONS', message, { details: { seed } });
  }
}

/**
 * Generates `organizations` organizations, their source records and the match index; the
 * same seed gives the same dataset. Organizations are generated up front; records are built
 * when asked for (see RecordTable).
 */
export function generateDataset(options: DatasetOptions): SandboxDataset {
  validate(options);
  const random = new Random(options.seed);
  const unique = new UniqueIdentifiers();
  const factory = new OrganizationFactory(random, unique);
  const records = new RecordTable(options.organizations * MAX_SOURCES_PER_ORGANIZATION);
  const organizations: Organization[] = [];
  const profiles: OrganizationProfile[] = [];
  const counters = new Map<string, number>();

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
      const svcId = `${source.prefix}:${svcIdValue(source, org, index, counter)}`;
      records.add(svcId, index, source, omittedFields(source, random), random.int(UPDATED_SPAN));
      draft.svcIds.push(svcId);
    }
    organizations.push(org);
    profiles.push(organizationProfile(org, draft.coreName));
  }

  function* profiledRecords(): Generator<ProfiledRecord> {
    for (let record = 0; record < records.count; record++) {
      const source = records.sourceOf(record);
      const org = records.organizationOf(record);
      yield {
        svcId: records.svcIds[record] ?? '',
        dataSourceId: source.id,
        storageId: source.storageId,
        entityKey: org,
        profile: recordProfile(itemAt(profiles, org), source, records.omittedOf(record)),
      };
    }
  }
  const matchIndex = buildMatchIndexFromProfiles(profiledRecords(), DATA_SOURCES);
  const ownership = new OwnershipGraph(
    organizations.map((org) => Date.parse(org.foundedOn) / 1000),
    random,
  );

  const orgOf = (record: number): Organization => itemAt(organizations, records.organizationOf(record));
  function recordAt(record: number): SourceRecord {
    if (!Number.isInteger(record) || record < 0 || record >= records.count) {
      throw new RangeError(`no record at ${record}; the dataset has ${records.count}`);
    }
    const source = records.sourceOf(record);
    return {
      svcId: records.svcIds[record] ?? '',
      dataSource: { id: source.id, name: source.name, category: source.category, prefix: source.prefix },
      ...(source.storageId === undefined ? {} : { storageId: source.storageId }),
      lastUpdatedAt: records.lastUpdatedAt(record),
      businessPartner: toBusinessPartner(recordContent(orgOf(record), source, records.omittedOf(record))),
    };
  }
  const organizationOf = (svcId: string): Organization | undefined => {
    const record = matchIndex.recordIndexOf(svcId);
    return record === undefined ? undefined : orgOf(record);
  };

  return {
    seed: options.seed,
    organizations,
    dataSources: DATA_SOURCES,
    recordCount: records.count,
    matchIndex,
    recordAt,
    getRecord: (svcId) => {
      const record = matchIndex.recordIndexOf(svcId);
      return record === undefined ? undefined : recordAt(record);
    },
    organizationOf,
    relationsOf: (svcId) => {
      const org = organizationOf(svcId);
      // A related organization is named by its first record, which is in a default source.
      return org === undefined
        ? undefined
        : ownership.relationsOf(org.index, (related) => organizations[related]?.svcIds[0] ?? '');
    },
  };
}
