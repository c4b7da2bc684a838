// Storages (organizational data mirrors) as sets of the dataset's organizations. Two kinds:
// the dataset's own mirror sources (erp-customers, srm-suppliers), whose partners are the
// records lookups find with ACTIVATE_DATASOURCE_STORAGES; and storage-1..3, seeded slices of
// the organizations, so jobs can run over a known number of partners.

import type { Organization, SandboxDataset } from '../dataset/dataset.ts';

export interface StoragePartner {
  /** The partner's id inside the storage. */
  businessPartnerId: string;
  /** The record standing for the partner: the mirror's own record, else the organization's first. */
  svcId: string;
  organization: Organization;
}

export interface Storage {
  id: string;
  /** The mirror's data source, for the dataset's mirrors. */
  dataSourceId: string | undefined;
  /** Whether a data monitor watches the storage; only those have overlap logs. */
  monitored: boolean;
  partners: readonly StoragePartner[];
}

/** Sizes of storage-1, storage-2, storage-3 (capped at the dataset size). */
const SEEDED_STORAGE_SIZES = [100, 1_000, 10_000] as const;

export class StorageCatalog {
  readonly #storages = new Map<string, Storage>();

  constructor(dataset: SandboxDataset) {
    for (const source of dataset.dataSources) {
      if (source.storageId === undefined) continue;
      const prefix = `${source.prefix}:`;
      const partners = dataset.organizations.flatMap((organization) =>
        organization.svcIds
          .filter((svcId) => svcId.startsWith(prefix))
          .map((svcId) => ({ businessPartnerId: svcId.slice(prefix.length), svcId, organization })),
      );
      this.#storages.set(source.storageId, {
        id: source.storageId,
        dataSourceId: source.id,
        monitored: true,
        partners,
      });
    }
    SEEDED_STORAGE_SIZES.forEach((size, position) => {
      const id = `storage-${position + 1}`;
      const partners = dataset.organizations.slice(0, size).map((organization, index) => ({
        businessPartnerId: `BP-${String(index + 1).padStart(6, '0')}`,
        svcId: organization.svcIds[0] ?? '',
        organization,
      }));
      this.#storages.set(id, { id, dataSourceId: undefined, monitored: false, partners });
    });
  }

  get(id: string): Storage | undefined {
    return this.#storages.get(id);
  }

  get ids(): string[] {
    return [...this.#storages.keys()];
  }
}
