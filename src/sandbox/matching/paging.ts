import { SandboxMatchingError } from './errors.ts';

/** What paging needs of a ranked candidate. */
export interface Rankable {
  readonly svcId: string;
  readonly score: number;
}

/** Descending score, then svcId, so equal scores page in a stable order. */
export function compareRanked(a: Rankable, b: Rankable): number {
  if (a.score !== b.score) return b.score - a.score;
  return a.svcId < b.svcId ? -1 : a.svcId > b.svcId ? 1 : 0;
}

// The cursor is the (score, svcId) of the last candidate handed out, base64url-encoded so
// callers treat it as opaque. A position instead of an offset: the next page starts after
// that candidate even if the caller changed the page size.
export function encodeCursor(last: Rankable): string {
  return Buffer.from(JSON.stringify([last.score, last.svcId]), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): Rankable {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch (cause) {
    throw invalidCursor(cursor, cause);
  }
  if (!Array.isArray(decoded) || decoded.length !== 2) throw invalidCursor(cursor);
  const [score, svcId] = decoded as unknown[];
  if (typeof score !== 'number' || typeof svcId !== 'string') throw invalidCursor(cursor);
  return { score, svcId };
}

function invalidCursor(cursor: string, cause?: unknown): SandboxMatchingError {
  return new SandboxMatchingError(
    'SANDBOX_INVALID_CURSOR',
    'startAfter is not a cursor from a previous page',
    {
      cause,
      details: { startAfter: cursor },
    },
  );
}

export interface Page<T> {
  readonly values: readonly T[];
  /** Cursor for the next page; absent on the last page. */
  readonly nextStartAfter: string | undefined;
}

/** One page of `ranked` (sorted by compareRanked): up to `limit` entries after `startAfter`. */
export function pageOf<T extends Rankable>(
  ranked: readonly T[],
  limit: number,
  startAfter: string | undefined,
): Page<T> {
  let start = 0;
  if (startAfter !== undefined) {
    const after = decodeCursor(startAfter);
    start = ranked.findIndex((candidate) => compareRanked(candidate, after) > 0);
    if (start === -1) start = ranked.length;
  }
  const values = ranked.slice(start, start + limit);
  const last = values[values.length - 1];
  const more = start + values.length < ranked.length;
  return { values, nextStartAfter: more && last !== undefined ? encodeCursor(last) : undefined };
}
