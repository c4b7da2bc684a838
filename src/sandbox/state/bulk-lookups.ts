// Bulk lookups as stored: the tasks, the parameters they run with, and the results in task
// order as the runner produces them. Progress is the share of tasks done.

import { randomUUID } from 'node:crypto';
import type { BulkLookupResult, BulkLookupTask } from '../lookup/bulk-task-result.ts';
import type { LookupParameters } from '../lookup/lookup-parameters.ts';

export type BulkStatusCode = 'CREATED' | 'RUNNING' | 'FINISHED' | 'FAILED';

export interface BulkLookupRecord {
  id: string;
  createdAt: number;
  createdBy: string;
  finishedAt: number | undefined;
  status: BulkStatusCode;
  parameters: LookupParameters;
  tasks: readonly BulkLookupTask[];
  results: BulkLookupResult[];
}

export const bulkProgress = (bulk: BulkLookupRecord): number =>
  bulk.tasks.length === 0 ? 100 : Math.floor((bulk.results.length / bulk.tasks.length) * 100);

export class BulkLookupStore {
  readonly #bulks = new Map<string, BulkLookupRecord>();

  create(
    input: Pick<BulkLookupRecord, 'createdAt' | 'createdBy' | 'parameters' | 'tasks'>,
  ): BulkLookupRecord {
    const bulk: BulkLookupRecord = {
      ...input,
      id: randomUUID(),
      finishedAt: undefined,
      status: 'CREATED',
      results: [],
    };
    this.#bulks.set(bulk.id, bulk);
    return bulk;
  }

  get(id: string): BulkLookupRecord | undefined {
    return this.#bulks.get(id);
  }

  /** Every bulk accepted since the start or the last reset, in order of creation. */
  all(): IterableIterator<BulkLookupRecord> {
    return this.#bulks.values();
  }

  clear(): void {
    this.#bulks.clear();
  }
}
