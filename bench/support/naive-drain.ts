// Draining a backlog with the naive per-record client (bench/workers/naive.ts).
import type { RunningSandbox } from '../../src/sandbox/index.ts';
import type { BenchContext } from './context.ts';
import type { WorkerResult } from './jobs.ts';
import { runWorker } from './spawn.ts';
import { createTopics, deleteTopics, uniqueName } from './topics.ts';

export async function drainNaive(
  context: BenchContext,
  sandbox: RunningSandbox,
  input: string,
  count: number,
  concurrency: number,
): Promise<WorkerResult> {
  const output = uniqueName('naive-out');
  await createTopics(context.kafka, [{ topic: output }]);
  try {
    return await runWorker({
      kind: 'naive',
      count,
      concurrency,
      sandboxUrl: sandbox.url,
      brokers: [context.bootstrap],
      registryUrl: context.registryUrl,
      input,
      output,
      groupId: uniqueName('naive'),
    });
  } finally {
    await deleteTopics(context.kafka, [output]);
  }
}
