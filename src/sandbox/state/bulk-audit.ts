// What every accepted bulk asked for, for tests that reconcile payment (GET /admin/bulk-audit):
// a task's content key is a hash of its jsonRecord with keys sorted, so the same partner
// content sent twice, under any task id, in any bulk, has the same key. A task's status, once
// it ran, tells a retry after an injected FAILED from content paid twice for no reason.

import { createHash } from 'node:crypto';
import type { BulkLookupRecord } from './bulk-lookups.ts';

export interface BulkAuditEntry {
  id: string;
  /** Epoch milliseconds on the sandbox clock. */
  createdAt: number;
  tasks: { taskId: string; contentKey: string; status?: string }[];
}

const sortedKeys = (_key: string, value: unknown): unknown =>
  value && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : value;

export const contentKey = (jsonRecord: unknown): string =>
  createHash('sha256')
    .update(JSON.stringify(jsonRecord ?? null, sortedKeys))
    .digest('hex')
    .slice(0, 32);

export function bulkAuditEntry(bulk: BulkLookupRecord): BulkAuditEntry {
  return {
    id: bulk.id,
    createdAt: bulk.createdAt,
    // A task's result is the one at its position (the runner works in task order): looked up by
    // task id, two tasks of one id both showed the last one's status.
    tasks: bulk.tasks.map((task, index) => {
      const status = bulk.results[index]?.status?.code;
      return {
        taskId: task.id,
        contentKey: contentKey(task.businessPartner.jsonRecord),
        ...(status === undefined ? {} : { status }),
      };
    }),
  };
}
