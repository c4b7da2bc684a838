// Lookups over the dataset with the matcher, answered in the API's shapes: candidates with
// their score by descending score, the golden record, and the outcome classification
// (MATCH, MAYBE_MATCH, NO_MATCH) of the best candidate as an annotation. Lookups see the
// dataset as revised (POST /admin/dataset/revise).

import type { Schemas } from '../../refdata/index.ts';
import type { SandboxDataset } from '../dataset/dataset.ts';
import { classifyMatch, thresholdsFor, type MatchThresholds } from '../matching/classification.ts';
import { Matcher, type LookupPage, type MatchCandidate, type RecordRevision } from '../matching/matcher.ts';
import { SandboxMatchingError } from '../matching/errors.ts';
import { parseLookupOptions } from '../matching/options.ts';
import { subjectFromBusinessPartnerParam, type BusinessPartnerParamInput } from '../matching/query-shapes.ts';
import type { MatchSubject } from '../matching/subject.ts';
import { apiPartner, lookupMatch } from '../directory/partner-views.ts';
import type { DatasetRevisions } from '../state/dataset-revisions.ts';
import { matcherOptions, type LookupParameters } from './lookup-parameters.ts';

type Annotation = Schemas['Annotation'];

export interface LookupOutcome {
  page: LookupPage;
  values: Schemas['BusinessPartnerLookupMatch'][];
  goldenRecord: Schemas['GoldenRecord'] | undefined;
  annotations: Annotation[];
}

export class LookupService {
  readonly #dataset: SandboxDataset;
  readonly #revisions: DatasetRevisions;
  readonly #matcher: Matcher;

  constructor(dataset: SandboxDataset, revisions: DatasetRevisions) {
    this.#dataset = dataset;
    this.#revisions = revisions;
    this.#matcher = new Matcher(dataset.matchIndex);
  }

  /** One cursor page of candidates. Throws SandboxMatchingError for an empty query or a foreign cursor. */
  lookup(subject: MatchSubject, parameters: LookupParameters): LookupOutcome {
    const page = this.#matcher.lookup(
      subject,
      matcherOptions(parameters),
      this.#revision(subject, parameters),
    );
    return {
      page,
      values: page.values.map((candidate) => this.match(candidate)),
      goldenRecord: page.goldenRecord && this.goldenRecord(page.goldenRecord),
      annotations: [this.classification(page.values[0] ?? page.goldenRecord, subject, parameters)],
    };
  }

  /** Every candidate at or above the threshold, best first (the v3 forms page over these). */
  rank(subject: MatchSubject, parameters: LookupParameters): MatchCandidate[] {
    const options = parseLookupOptions(matcherOptions(parameters));
    return this.#matcher.rank(subject, options, this.#revision(subject, parameters));
  }

  /** The golden record of a default lookup on `partner`; undefined when nothing matches. */
  bestMatchOf(partner: BusinessPartnerParamInput | undefined): string | undefined {
    if (partner === undefined) return undefined;
    try {
      const subject = subjectFromBusinessPartnerParam(partner);
      return this.#matcher.lookup(subject, { limit: 1 }, this.#revision(subject)).goldenRecord?.svcId;
    } catch (error) {
      if (error instanceof SandboxMatchingError) return undefined;
      throw error;
    }
  }

  /** The first `limit` candidates for one line of free text (name and address together). */
  search(text: string, limit: number): LookupPage {
    return this.#matcher.search(text, { limit }, this.#revisions.forLookup(thresholdsFor(undefined)));
  }

  /** The golden record view of one record of the dataset. */
  goldenRecordOf(svcId: string): Schemas['GoldenRecord'] | undefined {
    const recordIndex = this.#revisions.recordIndexOf(svcId);
    if (recordIndex === undefined) return undefined;
    return this.goldenRecord({
      recordIndex,
      completeness: this.#dataset.matchIndex.completeness[recordIndex] ?? 0,
    });
  }

  match(candidate: MatchCandidate): Schemas['BusinessPartnerLookupMatch'] {
    return lookupMatch(this.#revisions.recordAt(candidate.recordIndex), candidate.score);
  }

  goldenRecord(candidate: {
    recordIndex: number;
    score?: number;
    completeness: number;
  }): Schemas['GoldenRecord'] {
    const record = this.#revisions.recordAt(candidate.recordIndex);
    return {
      svcId: record.svcId,
      matchingProfile: {
        ...(candidate.score === undefined ? {} : { score: candidate.score }),
        completeness: candidate.completeness,
      },
      businessPartner: apiPartner(record.businessPartner),
      mappedRecord: { ...record.businessPartner.formattedErpRecord },
      metadata: [{ dataSource: record.dataSource.id, lastUpdatedAt: record.lastUpdatedAt }],
      businessPartnerChanges: [],
    };
  }

  /** Thresholds from the request's matchingClassifications for the query's country, else the defaults. */
  classification(
    best: MatchCandidate | undefined,
    subject: MatchSubject,
    parameters: LookupParameters,
  ): Annotation {
    const thresholds = this.#thresholds(subject, parameters);
    return { type: 'MATCH_CLASSIFICATION', value: classifyMatch(best?.score, thresholds), thresholds };
  }

  #thresholds(subject: MatchSubject, parameters?: LookupParameters): MatchThresholds {
    return thresholdsFor(subject.address?.country, parameters?.matchingClassifications);
  }

  /** A reclassified record crosses the thresholds the lookup classifies with. */
  #revision(subject: MatchSubject, parameters?: LookupParameters): RecordRevision | undefined {
    return this.#revisions.forLookup(this.#thresholds(subject, parameters));
  }
}
