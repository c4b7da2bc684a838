import type { LookupFeature } from './features.ts';
import type { RecordSlot } from './match-index.ts';
import type { LookupOptions } from './options.ts';

/**
 * Which record slots a lookup may return, as a 0/1 mask over `slots`.
 *
 * - A source that needs a feature (ACTIVATE_DATASOURCE_*) is searched only with it; naming it in
 *   `dataSources` does not switch it on, as the service needs the feature and the credentials.
 * - `dataSources`, when not empty, narrows the service's own sources to those listed.
 * - Data mirrors need ACTIVATE_DATASOURCE_STORAGES; `storagesDataSources`, when not empty,
 *   narrows them to the listed storages and, per storage, to the listed data sources.
 */
export function allowedSlots(
  slots: readonly RecordSlot[],
  features: ReadonlySet<LookupFeature>,
  options: Pick<LookupOptions, 'dataSources' | 'storagesDataSources'>,
): Uint8Array {
  const listed = new Set(options.dataSources);
  const storages = new Map(options.storagesDataSources.map((entry) => [entry.storageId, entry.dataSources]));
  const allowed = new Uint8Array(slots.length);
  slots.forEach((slot, i) => {
    if (slot.activatedBy !== undefined && !features.has(slot.activatedBy)) return;
    if (slot.storageId === undefined) {
      if (listed.size > 0 && !listed.has(slot.dataSourceId)) return;
    } else {
      if (!features.has('ACTIVATE_DATASOURCE_STORAGES')) return;
      if (storages.size > 0) {
        const storageSources = storages.get(slot.storageId);
        if (storageSources === undefined) return;
        if (storageSources.length > 0 && !storageSources.includes(slot.dataSourceId)) return;
      }
    }
    allowed[i] = 1;
  });
  return allowed;
}
