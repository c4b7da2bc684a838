// EXTD lookup jobs over a storage: CREATED, RUNNING with progress, then FINISHED (or DIED with
// a statusMessage when the fault says so). A job over a storage that does not exist is
// CANCELED at once, the spec's status for an invalid input configuration. Results are read
// once the job is FINISHED: one item per partner of the storage.

import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Schemas } from '../../refdata/index.ts';
import { isoAt } from '../clock.ts';
import { invalidRequest, notFound } from '../errors.ts';
import { documentDefaults, withDefaults } from '../http/document-defaults.ts';
import { offsetOf, offsetPage } from '../http/offset-paging.ts';
import { operationRoute } from '../http/operation-route.ts';
import type { ResolvedSandboxOptions } from '../options.ts';
import { jobStateAt, planJob } from '../state/job-timeline.ts';
import type { ExtdLookupJobRecord } from '../state/jobs.ts';
import type { SandboxState } from '../state/sandbox-state.ts';

export function registerExtdLookupJobRoutes(
  app: FastifyInstance,
  state: SandboxState,
  options: Readonly<ResolvedSandboxOptions>,
): void {
  const now = (): number => options.clock.now();

  operationRoute(app, 'createExtdLookupJob', ({ body, principal }) => {
    const storage = body.storageId === undefined ? undefined : state.storages.get(body.storageId);
    const dies = storage !== undefined && state.faults.jobDies();
    const createdAt = now();
    const job = state.extdJobs.add({
      id: randomUUID(),
      storageId: body.storageId,
      createdAt,
      createdBy: principal,
      timeline: planJob({
        createdAt,
        partners: storage?.partners.length ?? 0,
        instant: options.mode === 'instant',
        msPerPartner: options.jobMsPerPartner,
        dies,
      }),
      cancelReason: storage ? undefined : `storage ${body.storageId ?? '(none)'} does not exist`,
      partners: storage?.partners ?? [],
      request: withDefaults(body, documentDefaults('createExtdLookupJob').body),
    });
    state.stats.add('jobsCreated');
    if (dies) state.stats.add('jobsDied');
    return jobView(job, now());
  });

  const jobOf = (id: string): ExtdLookupJobRecord => {
    const job = state.extdJobs.get(id);
    if (!job) throw notFound(`EXTD lookup job ${id}`);
    return job;
  };

  operationRoute(app, 'getExtdLookupJob', ({ path }) => jobView(jobOf(path.id), now()));

  operationRoute(app, 'listExtdLookupJobResults', ({ path, query }) => {
    const job = jobOf(path.id);
    if (job.cancelReason !== undefined || jobStateAt(job.timeline, now()).phase !== 'FINISHED') {
      throw invalidRequest('path.id', 'results can be read once the job is FINISHED');
    }
    const wanted = new Set(query.businessPartnerId ?? []);
    const items = resultItems(job).filter(
      (item) => wanted.size === 0 || wanted.has(item.businessPartnerId ?? ''),
    );
    const limit = query.limit ?? 0;
    const page = offsetPage(items, offsetOf(query.startAfter, 'query.startAfter'), limit);
    const answer: Schemas['ExtdLookupJobResultsPage'] = { limit, total: items.length, values: page.values };
    if (query.startAfter !== undefined) answer.startAfter = query.startAfter;
    if (page.nextStartAfter !== undefined) answer.nextStartAfter = page.nextStartAfter;
    return answer;
  });
}

/** The partners the EXTD provider knows are those whose organization has an EXTD record. */
function resultItems(job: ExtdLookupJobRecord): Schemas['ExtdLookupJobItemResult'][] {
  const { mode = 'MATCH', extdDataSource } = job.request;
  return job.partners.map((partner) => {
    const extdSvcId = partner.organization.svcIds.find((svcId) => svcId.startsWith('EXTD:'));
    const item = { businessPartnerId: partner.businessPartnerId, mode, extdDataSource };
    return extdSvcId === undefined
      ? { ...item, status: 'NOT_MATCHED', message: 'no EXTD record' }
      : { ...item, svcId: extdSvcId, status: 'MATCHED' };
  });
}

function jobView(job: ExtdLookupJobRecord, now: number): Schemas['ExtdLookupJob'] {
  const view: Schemas['ExtdLookupJob'] = {
    id: job.id,
    createdAt: isoAt(job.createdAt),
    createdBy: job.createdBy,
  };
  if (job.storageId !== undefined) view.storageId = job.storageId;
  if (job.cancelReason !== undefined) {
    return {
      ...view,
      status: 'CANCELED',
      progress: 0,
      modifiedAt: isoAt(job.createdAt),
      statusMessage: job.cancelReason,
    };
  }
  const current = jobStateAt(job.timeline, now);
  view.status = current.phase;
  view.progress = current.progress;
  view.modifiedAt = isoAt(current.modifiedAt);
  if (current.phase === 'DIED') view.statusMessage = 'the job died unexpectedly (injected fault)';
  if (current.phase === 'FINISHED') {
    const items = resultItems(job);
    const matched = items.filter((item) => item.status === 'MATCHED').length;
    view.result = { statistics: { partners: items.length, matched, notMatched: items.length - matched } };
  }
  return view;
}
