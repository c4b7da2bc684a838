// Entry of a benchmark's child process: receives one job from the parent, reports `ready`
// once it is consuming, then `done` with its figures, and exits. With BENCH_ALLOC_PROF set, it
// writes an allocation profile of the job to out/profiles (allocation-profile.ts).
import { allocationProfileKind, startAllocationProfile } from './allocation-profile.ts';
import type { WorkerCommand, WorkerJob, WorkerMessage, WorkerResult } from './jobs.ts';
import { profilesDir } from './spawn.ts';

const send = (message: WorkerMessage) =>
  new Promise<void>((resolve) => {
    if (process.send) process.send(message, () => resolve());
    else resolve();
  });

/** The record count the parent sends once it knows how many records it produced. */
const finishCommand = (): Promise<number> =>
  new Promise((resolve) => {
    const listener = (message: WorkerCommand) => {
      if (message.type !== 'finish') return;
      process.off('message', listener);
      resolve(message.records);
    };
    process.on('message', listener);
  });

async function run(job: WorkerJob): Promise<WorkerResult> {
  const ready = () => void send({ type: 'ready' });
  switch (job.kind) {
    case 'raw':
      return (await import('../workers/raw.ts')).rawPassthrough(job, ready);
    case 'pipeline':
      return (await import('../workers/pipeline.ts')).pipelineRun(job.config, job.count, ready);
    case 'open-pipeline':
      return (await import('../workers/pipeline.ts')).pipelineRun(job.config, finishCommand(), ready);
    case 'naive':
      return (await import('../workers/naive.ts')).naiveClient(job, ready);
  }
}

async function profiled(job: WorkerJob): Promise<WorkerResult> {
  const kind = allocationProfileKind(process.env.BENCH_ALLOC_PROF);
  if (!kind) return run(job);
  const stop = await startAllocationProfile(kind, profilesDir, `${job.kind}-${kind}-${Date.now()}`);
  const result = await run(job);
  await stop();
  return result;
}

process.once('message', (job: WorkerJob) => {
  profiled(job).then(
    async (result) => {
      await send({ type: 'done', result });
      process.exit(0);
    },
    async (error: unknown) => {
      await send({
        type: 'failed',
        message: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
      process.exit(1);
    },
  );
});
