// EXTD lookup jobs and event store initializer jobs as stored. Their state at any moment is
// computed from the timeline (see job-timeline.ts); a job that could not start carries the
// reason instead.

import type { Schemas } from '../../refdata/index.ts';
import type { StoragePartner } from '../directory/storages.ts';
import type { JobTimeline } from './job-timeline.ts';

export interface ExtdLookupJobRecord {
  id: string;
  storageId: string | undefined;
  createdAt: number;
  createdBy: string;
  timeline: JobTimeline;
  /** Why the job was canceled at once (invalid input configuration). */
  cancelReason: string | undefined;
  partners: readonly StoragePartner[];
  request: Partial<Schemas['ExtdLookupJobCreateRequest']>;
}

export interface EventStoreJobRecord {
  id: string;
  createdAt: number;
  createdBy: string;
  timeline: JobTimeline;
  /** Why the job could not start. */
  startFailure: string | undefined;
  partnerCount: number;
  request: Partial<Schemas['EventStoreInitializerJobCreateRequest']> & { batchSize: number };
}

export class JobStore<Job extends { id: string }> {
  readonly #jobs = new Map<string, Job>();

  add(job: Job): Job {
    this.#jobs.set(job.id, job);
    return job;
  }

  get(id: string): Job | undefined {
    return this.#jobs.get(id);
  }

  clear(): void {
    this.#jobs.clear();
  }
}
