import type { Random } from './random.ts';

/** A relation as fetchrelations returns it, from the point of view of the partner asked about. */
export interface PartnerRelation {
  /** The related partner's svcId (its first source record). */
  readonly svcId: string;
  readonly classTechnicalKey: 'OWNERSHIP';
  /** What the related partner is to the one asked about. */
  readonly typeTechnicalKey: 'PARENT' | 'SUBSIDIARY';
  readonly startedAt: string;
  readonly endedAt?: string;
}

const SUBSIDIARY_SHARE = 0.15;
const ENDED_SHARE = 0.2;
const DAY_SECONDS = 86_400;
const LATEST = Date.UTC(2024, 11, 31) / 1000;

const isoDate = (seconds: number): string => new Date(seconds * 1000).toISOString();

/**
 * Ownership between organizations: some organizations have a parent among those generated
 * before them (so the graph has no cycles); some of these links have ended.
 * Kept in typed arrays; relation objects are built per request.
 */
export class OwnershipGraph {
  readonly #parent: Int32Array;
  readonly #startedAt: Float64Array;
  readonly #endedAt: Float64Array;
  readonly #childOffsets: Int32Array;
  readonly #children: Int32Array;

  constructor(foundedAt: readonly number[], random: Random) {
    const count = foundedAt.length;
    this.#parent = new Int32Array(count).fill(-1);
    this.#startedAt = new Float64Array(count);
    // NaN: the link has not ended.
    this.#endedAt = new Float64Array(count).fill(Number.NaN);
    const childCounts = new Int32Array(count + 1);
    for (let child = 1; child < count; child++) {
      if (!random.chance(SUBSIDIARY_SHARE)) continue;
      const parent = random.int(child);
      const earliest = Math.max(foundedAt[child] ?? 0, foundedAt[parent] ?? 0);
      const started = Math.min(earliest + random.int(3650) * DAY_SECONDS, LATEST);
      this.#parent[child] = parent;
      this.#startedAt[child] = started;
      // An ended link lasted at least a month, and ended by the dataset's reference date.
      if (random.chance(ENDED_SHARE) && started + 30 * DAY_SECONDS <= LATEST) {
        this.#endedAt[child] = Math.min(started + random.between(30, 2000) * DAY_SECONDS, LATEST);
      }
      childCounts[parent + 1] = (childCounts[parent + 1] ?? 0) + 1;
    }
    for (let i = 1; i <= count; i++) childCounts[i] = (childCounts[i] ?? 0) + (childCounts[i - 1] ?? 0);
    this.#childOffsets = childCounts;
    this.#children = new Int32Array(childCounts[count] ?? 0);
    const filled = new Int32Array(count);
    for (let child = 0; child < count; child++) {
      const parent = this.#parent[child] ?? -1;
      if (parent < 0) continue;
      this.#children[(childCounts[parent] ?? 0) + (filled[parent] ?? 0)] = child;
      filled[parent] = (filled[parent] ?? 0) + 1;
    }
  }

  /** Relations of organization `org`; `svcIdOf` names the record that stands for an organization. */
  relationsOf(org: number, svcIdOf: (org: number) => string): PartnerRelation[] {
    const relations: PartnerRelation[] = [];
    const parent = this.#parent[org] ?? -1;
    if (parent >= 0) relations.push(this.#relation(org, svcIdOf(parent), 'PARENT'));
    const from = this.#childOffsets[org] ?? 0;
    const to = this.#childOffsets[org + 1] ?? from;
    for (let i = from; i < to; i++) {
      const child = this.#children[i] ?? 0;
      relations.push(this.#relation(child, svcIdOf(child), 'SUBSIDIARY'));
    }
    return relations;
  }

  /** The relation recorded on `child` (its link to its parent), seen as `type`. */
  #relation(child: number, svcId: string, type: PartnerRelation['typeTechnicalKey']): PartnerRelation {
    const endedAt = this.#endedAt[child] ?? Number.NaN;
    return {
      svcId,
      classTechnicalKey: 'OWNERSHIP',
      typeTechnicalKey: type,
      startedAt: isoDate(this.#startedAt[child] ?? 0),
      ...(Number.isNaN(endedAt) ? {} : { endedAt: isoDate(endedAt) }),
    };
  }
}
