// The result of one bulk task: the first `limit` candidates and the golden record, with a
// status object per task. A task whose business partner gives nothing to compare is
// INVALID_INPUT; an injected failure is FAILED with no candidates.

import type { Schemas } from '../../refdata/index.ts';
import { SandboxMatchingError } from '../matching/errors.ts';
import { subjectFromBusinessPartnerParam } from '../matching/query-shapes.ts';
import type { LookupParameters } from './lookup-parameters.ts';
import type { LookupService } from './lookup-service.ts';

export type BulkLookupTask = Schemas['BulkLookupTask'];
export type BulkLookupResult = Schemas['BulkLookupResult'];
/** A result before it is given its task id, as the instant mode caches it. */
export type TaskOutcome = Omit<BulkLookupResult, 'taskId'>;

export function lookupTaskOutcome(
  lookups: LookupService,
  task: BulkLookupTask,
  parameters: LookupParameters,
  timestamp: string,
): TaskOutcome {
  const subject = subjectFromBusinessPartnerParam(task.businessPartner);
  try {
    // Each task gets its first page; a bulk has no cursor per task.
    const outcome = lookups.lookup(subject, { ...parameters, startAfter: undefined });
    const result: TaskOutcome = {
      status: { code: 'OK', technicalKey: 'OK', timestamp },
      values: outcome.values,
    };
    if (outcome.goldenRecord) result.goldenRecord = outcome.goldenRecord;
    return result;
  } catch (error) {
    if (!(error instanceof SandboxMatchingError)) throw error;
    return {
      status: { code: 'INVALID_INPUT', technicalKey: error.code, details: [error.message], timestamp },
      values: [],
    };
  }
}

export function failedTaskOutcome(timestamp: string): TaskOutcome {
  return {
    status: {
      code: 'FAILED',
      technicalKey: 'EXTERNAL_SERVICE_FAILED',
      details: ['injected task failure'],
      timestamp,
    },
    values: [],
  };
}
