// The order of jobs that decides which of one scope runs: the executor runs the first of its
// scope that has not ended, `status` names the one a job waits for, `list` shows them in it.
// A job that has started (a share wrote progress) keeps its scope until it ends, ahead of every
// job that has not: a job written while it runs but created earlier (a schedule's job carries
// its slot as createdAt, a CLI's clock may be behind) waits for it instead of preempting it.
// Otherwise the earlier creation time goes first, then the smaller id. The order the records
// were written in cannot serve: the state topic spreads them over partitions, and compaction
// drops a job's first record once the job is rewritten (pause, resume, cancel, throttle).
import type { RerunJob, RerunJobStore, RerunPartitionProgress } from './rerun-job.ts';

/** Compares jobs in run order; `progressOf` gives a job's progress records. */
export const jobOrder = (progressOf: (jobId: string) => ReadonlyMap<number, RerunPartitionProgress>) => {
  const started = (job: RerunJob) => progressOf(job.id).size > 0;
  return (a: RerunJob, b: RerunJob): number =>
    Number(started(b)) - Number(started(a)) ||
    a.createdAt - b.createdAt ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
};

/** The store's jobs in run order. */
export const inRunOrder = (store: Pick<RerunJobStore, 'jobs' | 'progress'>): RerunJob[] =>
  store.jobs().toSorted(jobOrder((id) => store.progress(id)));
