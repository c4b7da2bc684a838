// Changes to the reference data between two runs of a client (POST /admin/dataset/revise), so
// that a rerun has matches that changed to find. The generated dataset and its match index are
// shared by every sandbox of the same size and seed and stay as built: a revision is a layer
// over them, per sandbox, that lookups and fetches consult. A revised organization is changed
// in one of three ways:
// - relisted: each of its records has a new svcId, so a lookup that found it finds a new svcId;
// - withdrawn: its records are gone, so a lookup that found it finds another organization or nothing;
// - reclassified: in a lookup whose best candidate is one of its records, the scores of its
//   records move across the MATCH / MAYBE_MATCH boundary of the lookup's thresholds (a MATCH
//   down into MAYBE_MATCH, a MAYBE_MATCH up into MATCH; a NO_MATCH stays).
// A lookup whose best candidate is not a record of a revised organization answers what it
// answered before (withdrawn or relisted records further down its candidates aside).

import { z } from 'zod';
import type { Organization, SandboxDataset } from '../dataset/dataset.ts';
import { Random } from '../dataset/random.ts';
import type { SourceRecord } from '../dataset/records.ts';
import { acrossMatchThreshold, type MatchThresholds } from '../matching/classification.ts';
import type { RecordRevision } from '../matching/matcher.ts';

export const REVISION_KINDS = ['relisted', 'withdrawn', 'reclassified'] as const;
export type RevisionKind = (typeof REVISION_KINDS)[number];

export const datasetRevisionRequestSchema = z.strictObject({
  /** The same seed, on a sandbox in the same state, revises the same organizations the same way. */
  seed: z.int(),
  /** Share of the dataset's organizations to revise, rounded, at least one. */
  share: z.number().gt(0).max(1),
  /** Kinds of change, dealt in turn to the chosen organizations; all three by default. */
  kinds: z
    .array(z.enum(REVISION_KINDS))
    .min(1)
    .refine((kinds) => new Set(kinds).size === kinds.length, 'kinds must be unique')
    .default([...REVISION_KINDS]),
});

export type DatasetRevisionRequest = z.input<typeof datasetRevisionRequestSchema>;
/** A request with its defaults applied. */
export type DatasetRevisionSpec = z.output<typeof datasetRevisionRequestSchema>;

export interface RevisedOrganization {
  /** ORG-0000001 for the dataset's first organization (upstreamPartners' `organization` is its index). */
  readonly id: string;
  readonly index: number;
  readonly name: string;
  readonly country: string;
  readonly kind: RevisionKind;
  /** Each of its records: `after` is null once withdrawn, the new svcId once relisted, `before` otherwise. */
  readonly svcIds: readonly { readonly before: string; readonly after: string | null }[];
}

export interface DatasetRevisionReport {
  /** 1 for the first revision since the start or the last reset. */
  readonly revision: number;
  readonly seed: number;
  readonly share: number;
  readonly kinds: readonly RevisionKind[];
  readonly counts: Readonly<Record<RevisionKind, number>>;
  /** By index. */
  readonly organizations: readonly RevisedOrganization[];
}

export class DatasetRevisions {
  readonly #dataset: SandboxDataset;
  readonly #kindOfOrganization = new Map<number, RevisionKind>();
  readonly #svcIdOfRecord = new Map<number, string>();
  /** Relisted records by their new svcId. */
  readonly #recordOfSvcId = new Map<string, number>();
  readonly #reports: DatasetRevisionReport[] = [];

  constructor(dataset: SandboxDataset) {
    this.#dataset = dataset;
  }

  get reports(): readonly DatasetRevisionReport[] {
    return this.#reports;
  }

  /**
   * Revises `share` of the organizations not revised yet (fewer when fewer are left), chosen
   * and dealt their kinds by a generator seeded with `seed`.
   */
  revise(request: DatasetRevisionSpec): DatasetRevisionReport {
    const { seed, share, kinds } = request;
    const organizations = this.#dataset.organizations;
    const open = organizations
      .map((org) => org.index)
      .filter((index) => !this.#kindOfOrganization.has(index));
    const count = Math.min(open.length, Math.max(1, Math.round(share * organizations.length)));
    const random = new Random(seed);
    // A partial Fisher-Yates shuffle: the first `count` places hold the chosen organizations.
    for (let i = 0; i < count; i++) {
      const j = i + random.int(open.length - i);
      [open[i], open[j]] = [open[j] ?? 0, open[i] ?? 0];
    }
    const revision = this.#reports.length + 1;
    const revised = open.slice(0, count).map((index, i) => {
      const kind = kinds[i % kinds.length] ?? 'relisted';
      this.#kindOfOrganization.set(index, kind);
      return this.#revise(index, kind, revision);
    });
    const counts = { relisted: 0, withdrawn: 0, reclassified: 0 };
    for (const { kind } of revised) counts[kind] += 1;
    const report: DatasetRevisionReport = {
      revision,
      seed,
      share,
      kinds,
      counts,
      organizations: revised.sort((a, b) => a.index - b.index),
    };
    this.#reports.push(report);
    return report;
  }

  clear(): void {
    this.#kindOfOrganization.clear();
    this.#svcIdOfRecord.clear();
    this.#recordOfSvcId.clear();
    this.#reports.length = 0;
  }

  /** The revisions as a lookup classifying with `thresholds` sees them; undefined while there are none. */
  forLookup(thresholds: MatchThresholds): RecordRevision | undefined {
    if (this.#kindOfOrganization.size === 0) return undefined;
    const kindOf = (recordIndex: number): RevisionKind | undefined =>
      this.#kindOfOrganization.get(this.#dataset.matchIndex.entityKeys[recordIndex] ?? -1);
    return {
      isWithdrawn: (recordIndex) => kindOf(recordIndex) === 'withdrawn',
      svcIdOf: (recordIndex) => this.#svcIdOfRecord.get(recordIndex),
      // Only where the organization is the best match: moving its records up in a lookup
      // about another organization could put them above that one.
      scoreBeside: (best, candidate) =>
        candidate.entityKey === best.entityKey && kindOf(best.recordIndex) === 'reclassified'
          ? acrossMatchThreshold(
              candidate.score,
              thresholds,
              best.score >= thresholds.fullMatch ? 'down' : 'up',
            )
          : candidate.score,
    };
  }

  /** The record a svcId names now: none for a withdrawn record or the old svcId of a relisted one. */
  recordIndexOf(svcId: string): number | undefined {
    const relisted = this.#recordOfSvcId.get(svcId);
    if (relisted !== undefined) return relisted;
    const record = this.#dataset.matchIndex.recordIndexOf(svcId);
    if (record === undefined || this.#svcIdOfRecord.has(record)) return undefined;
    const kind = this.#kindOfOrganization.get(this.#dataset.matchIndex.entityKeys[record] ?? -1);
    return kind === 'withdrawn' ? undefined : record;
  }

  /** The organization a svcId names now (see recordIndexOf). */
  organizationOf(svcId: string): Organization | undefined {
    const record = this.recordIndexOf(svcId);
    return record === undefined
      ? undefined
      : this.#dataset.organizations[this.#dataset.matchIndex.entityKeys[record] ?? -1];
  }

  /** The dataset's record, under its new svcId when relisted. */
  recordAt(recordIndex: number): SourceRecord {
    const record = this.#dataset.recordAt(recordIndex);
    const svcId = this.#svcIdOfRecord.get(recordIndex);
    return svcId === undefined ? record : { ...record, svcId };
  }

  #revise(index: number, kind: RevisionKind, revision: number): RevisedOrganization {
    const org = this.#dataset.organizations[index];
    if (org === undefined) throw new RangeError(`no organization at ${index}`);
    const svcIds = org.svcIds.map((before) => {
      if (kind === 'withdrawn') return { before, after: null };
      if (kind === 'reclassified') return { before, after: before };
      const record = this.#dataset.matchIndex.recordIndexOf(before) ?? -1;
      let after = `${before}-R${revision}`;
      while (this.#dataset.matchIndex.recordIndexOf(after) !== undefined) after += 'R';
      this.#svcIdOfRecord.set(record, after);
      this.#recordOfSvcId.set(after, record);
      return { before, after };
    });
    return { id: org.id, index, name: org.name, country: org.country, kind, svcIds };
  }
}
