// Rerun jobs and progress records for tests. No executor exists outside `run`: a test that
// needs a job to move writes the progress an executor would write (simulatedProgress).
import {
  emptyChanges,
  emptyCounts,
  type RerunJob,
  type RerunPartitionProgress,
} from '../../src/rerun/rerun-job.ts';

export const testJob = (id: string, inputTopic: string, over: Partial<RerunJob> = {}): RerunJob => ({
  id,
  inputTopic,
  filter: {},
  batchSize: 500,
  tags: [],
  initialize: false,
  dryRun: false,
  quotaShare: 0.5,
  control: 'run',
  createdAt: Date.now(),
  controlAt: Date.now(),
  ...over,
});

/** What an executor would write for a partition after a chunk; not written by any product code here. */
export const simulatedProgress = (
  jobId: string,
  partition: number,
  over: Partial<RerunPartitionProgress> = {},
): RerunPartitionProgress => ({
  jobId,
  partition,
  total: 100,
  lastPartnerId: null,
  done: false,
  counts: emptyCounts(),
  changes: emptyChanges(),
  startedAt: Date.now(),
  updatedAt: Date.now(),
  owner: 'test-simulated-executor',
  ...over,
});
