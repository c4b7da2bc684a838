// Event store initializer jobs (data exchange API): one BusinessPartnerCreated event per
// partner of the storage (after `startAfter`, at most `limit`). States as for EXTD jobs; a
// storage that does not exist makes the job COULDNT_START, and a dying job carries its reason
// in `message`. NO_PERSISTENCE jobs write to no event store, so they have no eventStoreId.

import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Schemas } from '../../refdata/index.ts';
import { isoAt } from '../clock.ts';
import { notFound } from '../errors.ts';
import { documentDefaults, withDefaults } from '../http/document-defaults.ts';
import { operationRoute } from '../http/operation-route.ts';
import type { ResolvedSandboxOptions } from '../options.ts';
import { jobStateAt, planJob } from '../state/job-timeline.ts';
import type { EventStoreJobRecord } from '../state/jobs.ts';
import type { SandboxState } from '../state/sandbox-state.ts';

export function registerEventStoreJobRoutes(
  app: FastifyInstance,
  state: SandboxState,
  options: Readonly<ResolvedSandboxOptions>,
): void {
  const now = (): number => options.clock.now();

  operationRoute(app, 'createEventStoreInitializerJob', ({ body, username, principal }) => {
    const request = withDefaults(body, documentDefaults('createEventStoreInitializerJob').body);
    const storage = request.storageId === undefined ? undefined : state.storages.get(request.storageId);
    let partners = storage?.partners ?? [];
    // After it in partner id order, as a cursor is read whether its partner is there or not: an
    // id not in the storage started over from its first partner, every event made again.
    const { startAfter } = request;
    if (startAfter !== undefined)
      partners = partners.filter((partner) => partner.businessPartnerId > startAfter);
    if (request.limit !== undefined) partners = partners.slice(0, Math.max(0, request.limit));
    const dies = storage !== undefined && state.faults.jobDies();
    const createdAt = now();
    const job = state.eventStoreJobs.add({
      id: randomUUID(),
      createdAt,
      createdBy: username ?? principal,
      timeline: planJob({
        createdAt,
        partners: partners.length,
        instant: options.mode === 'instant',
        msPerPartner: options.jobMsPerPartner,
        dies,
      }),
      startFailure: storage ? undefined : `storage ${request.storageId ?? '(none)'} does not exist`,
      partnerCount: partners.length,
      request: { ...request, batchSize: request.batchSize ?? 0 },
    });
    state.stats.add('jobsCreated');
    if (dies) state.stats.add('jobsDied');
    return jobView(job, now());
  });

  operationRoute(app, 'getEventStoreInitializerJob', ({ path }) => {
    const job = state.eventStoreJobs.get(path.jobId);
    if (!job) throw notFound(`event store initializer job ${path.jobId}`);
    return jobView(job, now());
  });
}

function jobView(job: EventStoreJobRecord, now: number): Schemas['EventStoreInitializerJob'] {
  const { request } = job;
  const view: Schemas['EventStoreInitializerJob'] = {
    id: job.id,
    createdBy: job.createdBy,
    createdAt: isoAt(job.createdAt),
    batchSize: request.batchSize,
  };
  if (request.storageId !== undefined) view.storageId = request.storageId;
  if (request.dataSourceId !== undefined) view.dataSourceId = request.dataSourceId;
  if (request.startAfter !== undefined) view.startAfter = request.startAfter;
  if (job.startFailure !== undefined) {
    return {
      ...view,
      status: 'COULDNT_START',
      progress: 0,
      modifiedAt: view.createdAt,
      message: job.startFailure,
    };
  }
  if (!request.featuresOn?.includes('NO_PERSISTENCE')) view.eventStoreId = `event-store-${request.storageId}`;
  const current = jobStateAt(job.timeline, now);
  view.status = current.phase;
  view.progress = current.progress;
  view.modifiedAt = isoAt(current.modifiedAt);
  if (current.phase === 'DIED') view.message = 'the job died unexpectedly (injected fault)';
  if (current.phase === 'FINISHED')
    view.message = `${job.partnerCount} BusinessPartnerCreated events created`;
  return view;
}
