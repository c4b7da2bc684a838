// Per-key order and coalescing. At most one piece of work per partner is dispatched at
// a time, so its outputs come out in input order. A newer version that arrives while
// the older one still waits in the batcher replaces it there (one lookup, one quota
// unit for both); one that arrives after the older was submitted waits, and further
// versions coalesce into it. A rerun's copy of a stored partner that still waits (in the
// batcher, in a bulk for the rerun's share of the quota, or behind the partner's live work) is
// replaced by live work for the partner: the live record is looked up, which gives the
// partner's new state, and the rerun counts the partner as superseded. A copy offered while
// live work is under way waits behind it rather than being counted as superseded at once:
// that work may be answered from the storage, which refreshes nothing.
//
// A key is a partner within one input partition, as the partner state is kept. Input not keyed
// by partner id puts a partner's records on several partitions; scheduled as one key, work of a
// partition waited behind (or was merged into) another partition's, and that partition's
// revocation dropped it: never dispatched, its partition's commits stalled.
import { partitionOf, positionKey, type PartnerWork, type SubmittedTask, ofContent } from './records.ts';

interface KeySlot {
  active: PartnerWork;
  next?: PartnerWork;
}

const keyOf = (work: PartnerWork): string => `${positionKey(partitionOf(work))}/${work.partnerId}`;

export class KeyScheduler {
  readonly #slots = new Map<string, KeySlot>();
  readonly #dispatch: (work: PartnerWork) => void;
  #coalesced = 0;

  constructor(dispatch: (work: PartnerWork) => void) {
    this.#dispatch = dispatch;
  }

  /** Number of input records that were folded into an earlier record's lookup. */
  get coalesced(): number {
    return this.#coalesced;
  }

  get activeKeys(): number {
    return this.#slots.size;
  }

  offer(work: PartnerWork): void {
    const key = keyOf(work);
    const slot = this.#slots.get(key);
    if (!slot) {
      this.#slots.set(key, { active: work });
      this.#dispatch(work);
      return;
    }
    if (work.rerun) {
      // At its turn, a version the live work stored supersedes it (LookupCoordinator).
      if (slot.next) chain(slot.next, work);
      else slot.next = work;
      return;
    }
    const { rerun } = slot.active;
    // Not with live work waiting behind the copy (it came while the copy was held back for a
    // retry): that work would be dropped; the new one joins it instead.
    if (rerun && (slot.active.state === 'queued' || slot.active.awaitingQuota) && !slot.next) {
      // The rerun's copy leaves its bulk before it is paid for; the live work goes its own way.
      slot.active.superseded = true;
      rerun.settle({ kind: 'superseded' });
      work.replacedRerun = true;
      this.#slots.set(key, { active: work });
      this.#dispatch(work);
      return;
    }
    if (replaceWaitingCopy(slot, work)) return;
    // A version joins only the last work of its partner: one with work behind it (a delete)
    // would go out ahead of that work.
    if (!slot.next && slot.active.state === 'queued' && canMerge(slot.active, work)) {
      merge(slot.active, work);
      this.#coalesced += work.records.length;
      return;
    }
    if (slot.next && !waiting.has(slot.next) && canMerge(slot.next, work)) {
      merge(slot.next, work);
      this.#coalesced += work.records.length;
      return;
    }
    if (slot.next) {
      // A delete after a pending lookup (or the reverse) cannot be merged; keep both
      // in order by chaining them through the slot's waiting list.
      chain(slot.next, work);
      return;
    }
    slot.next = work;
  }

  /** Forgets every partner whose active work matches (its partition was revoked): none of its versions goes. */
  drop(matches: (work: PartnerWork) => boolean): void {
    for (const [key, slot] of this.#slots) if (matches(slot.active)) this.#slots.delete(key);
  }

  /** The partner's active work, `work`, is finished; the next version, if any, goes. */
  complete(work: PartnerWork): void {
    const key = keyOf(work);
    const slot = this.#slots.get(key);
    if (!slot) return;
    const next = slot.next;
    if (!next) {
      this.#slots.delete(key);
      return;
    }
    const after = waiting.get(next);
    waiting.delete(next);
    this.#slots.set(key, after ? { active: next, next: after } : { active: next });
    this.#dispatch(next);
  }
}

const waiting = new WeakMap<PartnerWork, PartnerWork>();

/** A rerun's copy waiting last behind live work gives its place to the newer live work. */
function replaceWaitingCopy(slot: KeySlot, work: PartnerWork): boolean {
  let before: PartnerWork | undefined;
  let last = slot.next;
  if (!last) return false;
  for (let next = waiting.get(last); next; next = waiting.get(last)) {
    before = last;
    last = next;
  }
  if (!last.rerun) return false;
  last.superseded = true;
  last.rerun.settle({ kind: 'superseded' });
  work.replacedRerun = true;
  if (before) waiting.set(before, work);
  else slot.next = work;
  return true;
}

function chain(head: PartnerWork, work: PartnerWork): void {
  let last = head;
  for (let next = waiting.get(last); next; next = waiting.get(last)) last = next;
  if (canMerge(last, work)) merge(last, work);
  else waiting.set(last, work);
}

/**
 * Records read again after a restart are answered by the task that answered them before:
 * a newer version joining them would have them looked up anew, and their second output
 * would come from another bulk than their first. Only records of the same task join them.
 */
const canMerge = (older: PartnerWork, newer: PartnerWork): boolean =>
  !older.rerun &&
  !newer.rerun &&
  older.kind === 'lookup' &&
  newer.kind === 'lookup' &&
  older.state !== 'submitted' &&
  (!older.resumeFrom || sameTask(older.resumeFrom, newer.resumeFrom));

const sameTask = (a: SubmittedTask, b: SubmittedTask | undefined): boolean =>
  a.submissionId === b?.submissionId && a.taskId === b.taskId;

/** The newer content wins; every input record stays, oldest first, to get its own output. */
function merge(into: PartnerWork, newer: PartnerWork): void {
  into.records.push(...newer.records);
  into.jsonRecord = newer.jsonRecord;
  into.hash = newer.hash;
  if (newer.earlierHash === undefined) delete into.earlierHash;
  else into.earlierHash = newer.earlierHash;
  if (into.resumeFrom) return;
  // An earlier run's submission only stands for the content it was made for.
  if (ofContent(into, newer.resumeFrom?.hash)) into.resumeFrom = newer.resumeFrom;
}
