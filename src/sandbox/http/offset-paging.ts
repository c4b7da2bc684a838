// Cursor pages over lists the sandbox keeps in a fixed order (bulk results, relations, job
// results, overlap logs): the cursor is the number of items already handed out. Where the
// document gives no bounds for `limit`, the sandbox's are: at least 1 (a page of nothing would
// hand back the same cursor forever) and at most `max` (larger values are cut down).

import { invalidRequest } from '../errors.ts';

export interface PageSize {
  default: number;
  max: number;
}

export function pageLimit(limit: number | undefined, field: string, size: PageSize): number {
  if (limit === undefined) return size.default;
  if (limit < 1) throw invalidRequest(field, `${field} must be >= 1`, 1);
  return Math.min(limit, size.max);
}

export function offsetOf(startAfter: string | undefined, field: string): number {
  if (startAfter === undefined) return 0;
  if (!/^\d+$/.test(startAfter))
    throw invalidRequest(field, `${field} must be a cursor from a previous page`);
  return Number(startAfter);
}

export interface OffsetPage<Item> {
  values: Item[];
  nextStartAfter?: string;
}

export function offsetPage<Item>(items: readonly Item[], offset: number, limit: number): OffsetPage<Item> {
  const values = items.slice(offset, offset + limit);
  const next = offset + values.length;
  return next < items.length ? { values, nextStartAfter: String(next) } : { values };
}
