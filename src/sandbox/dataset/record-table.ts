import type { DataSource } from './data-sources.ts';
import { DATA_SOURCES } from './data-sources.ts';
import { itemAt } from './random.ts';

const UPDATED_FROM = Date.UTC(2023, 0, 1) / 1000;

/**
 * The dataset's source records in columns: which organization, which source, which fields
 * are missing, when updated. Typed arrays instead of a quarter of a million record objects;
 * a record's content is rebuilt from its organization when asked for.
 */
export class RecordTable {
  readonly svcIds: string[] = [];
  readonly #organization: Int32Array;
  readonly #source: Uint8Array;
  readonly #omitted: Uint8Array;
  /** Seconds after UPDATED_FROM. */
  readonly #updated: Uint32Array;

  constructor(capacity: number) {
    this.#organization = new Int32Array(capacity);
    this.#source = new Uint8Array(capacity);
    this.#omitted = new Uint8Array(capacity);
    this.#updated = new Uint32Array(capacity);
  }

  get count(): number {
    return this.svcIds.length;
  }

  /** Adds a record; `updated` is seconds after 2023-01-01. Returns its index. */
  add(svcId: string, organization: number, source: DataSource, omitted: number, updated: number): number {
    const record = this.svcIds.length;
    if (record >= this.#organization.length) throw new RangeError(`record table full at ${record} records`);
    this.svcIds.push(svcId);
    this.#organization[record] = organization;
    this.#source[record] = DATA_SOURCES.indexOf(source);
    this.#omitted[record] = omitted;
    this.#updated[record] = updated;
    return record;
  }

  organizationOf(record: number): number {
    return this.#organization[record] ?? -1;
  }

  sourceOf(record: number): DataSource {
    return itemAt(DATA_SOURCES, this.#source[record] ?? 0);
  }

  /** The FIELD bits the record lacks. */
  omittedOf(record: number): number {
    return this.#omitted[record] ?? 0;
  }

  lastUpdatedAt(record: number): string {
    return new Date((UPDATED_FROM + (this.#updated[record] ?? 0)) * 1000).toISOString();
  }
}
