// Fetch results (v3 and v4 share these members) built from a dataset record and the fetch
// features in effect. Shapes the spec does not show (screening result, commercial ultimate,
// debug info) are the sandbox's own, kept small and deterministic.

import type { Schemas } from '../../refdata/index.ts';
import { isoAt } from '../clock.ts';
import type { Organization, SandboxDataset } from '../dataset/dataset.ts';
import type { SourceRecord } from '../dataset/records.ts';
import type { DatasetRevisions } from '../state/dataset-revisions.ts';
import { apiPartner, rawKeyValues } from './partner-views.ts';

export type FetchFeature = Schemas['FetchFeature'];

export interface FetchSettings {
  features: ReadonlySet<FetchFeature>;
  screeningMatchingThreshold: number | undefined;
  /** The request as received, echoed by SHOW_DEBUG_INFO. */
  request: Record<string, unknown>;
}

/** Ownership chains are short, but a bound keeps a corrupt chain from looping. */
const MAX_CHAIN = 50;

export class FetchResults {
  readonly #dataset: SandboxDataset;
  readonly #revisions: DatasetRevisions;
  readonly #now: () => number;

  constructor(dataset: SandboxDataset, revisions: DatasetRevisions, now: () => number) {
    this.#dataset = dataset;
    this.#revisions = revisions;
    this.#now = now;
  }

  /** The record of a platform id as the dataset is revised, or a reason why there is none (INVALID_INPUT). */
  find(svcId: string | undefined): SourceRecord | string {
    if (svcId === undefined || !svcId.includes(':'))
      return 'svcId must have the form <DATA_SOURCE_PREFIX>:<value>';
    const recordIndex = this.#revisions.recordIndexOf(svcId);
    return recordIndex === undefined ? `no business partner ${svcId}` : this.#revisions.recordAt(recordIndex);
  }

  common(record: SourceRecord, settings: FetchSettings): Schemas['FetchResultCommon'] {
    const { features } = settings;
    const result: Schemas['FetchResultCommon'] = {
      svcId: record.svcId,
      // A forced external call syncs now; otherwise the mirror's copy dates from the last update.
      lastSyncAt: features.has('FORCE_EXTERNAL_CALL') ? isoAt(this.#now()) : record.lastUpdatedAt,
      lastUpdatedAt: record.lastUpdatedAt,
      dataSource: record.dataSource.id,
      dataSourceName: record.dataSource.name,
      businessPartner: apiPartner(record.businessPartner),
      businessPartnerChanges: [],
      additionalInformation: [],
    };
    const raw = {
      svcId: record.svcId,
      dataSource: record.dataSource.id,
      ...apiPartner(record.businessPartner),
    };
    if (features.has('SHOW_RAW_DATA')) result.rawRecord = rawKeyValues(raw);
    if (features.has('SHOW_RAW_DATA_JSON')) result.rawRecordJson = raw;
    if (features.has('SHOW_DEBUG_INFO')) {
      result.debugInfo = {
        features: [...features],
        request: settings.request,
        curatedRequest: { svcId: record.svcId },
        externalServiceResponses: [],
      };
    }
    if (features.has('SCREEN_BUSINESS_NAMES')) {
      result.screeningResult = {
        screenedNames: record.businessPartner.names.map((name) => name.value),
        hits: [],
        status: 'NO_HIT',
        ...(settings.screeningMatchingThreshold === undefined
          ? {}
          : { threshold: settings.screeningMatchingThreshold }),
      };
    }
    const organization = this.#revisions.organizationOf(record.svcId);
    if (organization) {
      if (features.has('SHOW_COMMERCIAL_ULTIMATE'))
        result.commercialUltimate = this.#ultimate(organization, false);
      if (features.has('SHOW_DOMESTIC_COMMERCIAL_ULTIMATE')) {
        result.domesticCommercialUltimate = this.#ultimate(organization, true);
      }
    }
    if (features.has('DETECT_LEGAL_ENTITY')) {
      result.legalEntity = apiPartner(record.businessPartner);
      result.additionalInformation = [{ type: 'LEGAL_ENTITY_TYPE', value: 'HEADQUARTER' }];
    }
    return result;
  }

  /** The top of the organization's current ownership chain (within its country when domestic). */
  #ultimate(organization: Organization, domestic: boolean): Record<string, unknown> {
    let top = organization;
    let level = 0;
    for (; level < MAX_CHAIN; level++) {
      const parentSvcId = this.#dataset
        .relationsOf(top.svcIds[0] ?? '')
        ?.find((relation) => relation.typeTechnicalKey === 'PARENT' && relation.endedAt === undefined)?.svcId;
      const parent = parentSvcId === undefined ? undefined : this.#dataset.organizationOf(parentSvcId);
      if (!parent || (domestic && parent.country !== organization.country)) break;
      top = parent;
    }
    return { svcId: top.svcIds[0], name: top.name, country: top.country, hierarchyLevel: level };
  }
}
