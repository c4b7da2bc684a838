// The order of jobs that decides which of one scope runs first: the executor takes them one
// at a time in this order, and `list` shows them in it.
import type { RerunJob } from './rerun-job.ts';

export const compareJobs = (a: RerunJob, b: RerunJob): number =>
  a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
