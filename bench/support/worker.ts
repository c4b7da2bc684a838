// Entry of a benchmark's child process: receives one job from the parent, reports `ready`
// once it is consuming, then `done` with its figures, and exits.
import type { WorkerJob, WorkerMessage, WorkerResult } from './jobs.ts';

const send = (message: WorkerMessage) =>
  new Promise<void>((resolve) => {
    if (process.send) process.send(message, () => resolve());
    else resolve();
  });

async function run(job: WorkerJob): Promise<WorkerResult> {
  const ready = () => void send({ type: 'ready' });
  switch (job.kind) {
    case 'raw':
      return (await import('../workers/raw.ts')).rawPassthrough(job, ready);
    case 'pipeline':
      return (await import('../workers/pipeline.ts')).pipelineRun(job, ready);
    case 'naive':
      return (await import('../workers/naive.ts')).naiveClient(job, ready);
  }
}

process.once('message', (job: WorkerJob) => {
  run(job).then(
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
