// What `run` logs of the reruns it executes: a line per chunk at debug, a line when a
// partition's share is done or has died; progress in detail is in metrics and `rerun status`.
import { pipelineEvents, type Logger } from '../observability/index.ts';

/** Returns the function that stops logging. */
export function logReruns(logger: Logger): () => void {
  return pipelineEvents.rerun.subscribe((event) => {
    if (event.type !== 'chunk') return;
    const { jobId, partition, read, total, results } = event;
    if (event.done)
      logger.info({ rerun: jobId, partition, read, total }, 'rerun share of the partition done');
    else logger.debug({ rerun: jobId, partition, read, total, results }, 'rerun chunk recorded');
  });
}
