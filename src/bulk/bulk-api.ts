// What the bulk runner needs of the reference data service (v4 bulk lookup, spec items
// 13 and 14), in the pipeline's own terms; src/refdata's client provides it.
import type { JsonRecord } from '../mapping/lookup-task.ts';

export interface LookupParameters {
  matchingThreshold: number;
  maxCandidates: number;
  dataSources?: string[];
  featuresOn: string[];
  featuresOff: string[];
  configurationId?: string;
}

export interface BulkCandidate {
  svcId: string;
  score: number;
  dataSource?: string;
  name?: string;
}

export interface BulkTaskResult {
  taskId: string;
  /**
   * OK, FAILED or INVALID_INPUT; undefined when the result has no status (or one without a
   * code): the service did not say the task was looked up, so it is not taken for OK.
   */
  status: string | undefined;
  message?: string;
  candidates: BulkCandidate[];
  /** The golden record's business partner as JSON text, as the MatchResult carries it. */
  goldenRecord?: { svcId: string; json: string };
}

export interface BulkPage {
  id: string;
  /** CREATED, RUNNING, FINISHED or FAILED. */
  status: string;
  progress: number;
  results: BulkTaskResult[];
  nextStartAfter?: string;
  message?: string;
}

export interface BulkLookupApi {
  /** `timeoutMs` overrides the client's time-out of one attempt. */
  createBulk(
    tasks: { id: string; jsonRecord: JsonRecord }[],
    parameters: LookupParameters,
    timeoutMs?: number,
  ): Promise<{ id: string }>;
  readBulk(id: string, page: { limit: number; startAfter?: string }): Promise<BulkPage>;
}
