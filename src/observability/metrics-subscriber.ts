// Feeds the metrics from the pipeline's diagnostics channels, so that the pipeline
// publishes what happened and never touches a metric itself.
import { pipelineEvents, RERUN_RESULTS } from './events.ts';
import type { IntakePauseReason, Metrics } from './metrics.ts';

/**
 * An exception thrown by a channel subscriber surfaces as an uncaught exception and ends
 * the process; a bad count (negative, NaN) from a bug elsewhere must not do that through
 * a counter, which throws when decreased.
 */
const countable = (count: number): number => (Number.isFinite(count) && count > 0 ? count : 0);

/** Subscribes the metrics to every pipeline channel; returns the function that unsubscribes them. */
export function subscribeMetrics(metrics: Metrics): () => void {
  const pausedFor = new Set<IntakePauseReason>();

  const unsubscribers = [
    pipelineEvents.records.subscribe((event) => {
      const count = countable(event.count);
      if (event.type === 'in') metrics.recordsIn.inc({ source: event.source }, count);
      else if (event.type === 'out') metrics.recordsOut.inc({ outcome: event.outcome }, count);
      else if (event.type === 'redelivered') metrics.recordsRedelivered.inc(count);
      else if (event.type === 'adopted') metrics.recordsAdopted.inc({ paid: String(event.paid) }, count);
      else if (event.type === 'key-not-partner-id')
        metrics.recordsKeyNotPartnerId.inc({ key: event.missing ? 'missing' : 'other' }, count);
      else metrics.deadLetters.inc({ reason: event.reason }, count);
    }),
    pipelineEvents.bulk.subscribe((event) => {
      const tasks = countable(event.tasks);
      if (event.type === 'submitted') {
        metrics.bulkSubmissions.inc();
        metrics.tasksInFlight.inc(tasks);
        return;
      }
      metrics.tasksInFlight.dec(tasks);
      if (event.type === 'completed') metrics.bulkLatency.observe(countable(event.seconds));
    }),
    pipelineEvents.quota.subscribe((event) => {
      if (event.type === 'consumed') metrics.quotaConsumed.inc(countable(event.tasks));
      else metrics.quotaOverLimit.inc();
    }),
    pipelineEvents.intake.subscribe((event) => {
      // Quota and backpressure pause independently; intake runs only when neither holds it.
      if (event.type === 'paused' && !pausedFor.has(event.reason)) {
        pausedFor.add(event.reason);
        metrics.intakePauses.inc({ reason: event.reason });
      } else if (event.type === 'resumed') {
        pausedFor.delete(event.reason);
      }
      metrics.intakePaused.set(pausedFor.size > 0 ? 1 : 0);
    }),
    pipelineEvents.http.subscribe((event) => {
      metrics.httpRequests.inc({ operation: event.operation, status: String(event.status) });
    }),
    pipelineEvents.retry.subscribe((event) => {
      metrics.retries.inc({ reason: event.reason });
    }),
    pipelineEvents.state.subscribe((event) => {
      const labels = { topic: event.topic, partition: String(event.partition) };
      metrics.stateRestoreRecords.inc(labels, countable(event.records));
      metrics.stateRestoreSeconds.set(labels, countable(event.seconds));
      metrics.stateRestoring.set(labels, event.type === 'restored' ? 0 : 1);
    }),
    pipelineEvents.rerun.subscribe((event) => {
      if (event.type === 'quota') return metrics.rerunQuotaConsumed.inc(countable(event.tasks));
      const labels = { rerun: event.jobId, partition: String(event.partition) };
      // A share no longer running here leaves no series behind (it moved: its new owner exports it).
      if (event.type === 'left') return metrics.rerunProgress.remove(labels);
      for (const result of RERUN_RESULTS) metrics.rerunPartners.inc({ result }, event.results[result]);
      // A finished share leaves no series behind: nightly reruns would pile them up.
      if (event.done) metrics.rerunProgress.remove(labels);
      else metrics.rerunProgress.set(labels, event.total > 0 ? Math.min(1, event.read / event.total) : 0);
    }),
    pipelineEvents.lag.subscribe((event) => {
      // A process reads one input topic: its series are all of that topic.
      if ('unknown' in event) return metrics.consumerLag.reset();
      metrics.consumerLag.set({ topic: event.topic, partition: String(event.partition) }, event.lag);
    }),
  ];

  return () => {
    for (const unsubscribe of unsubscribers) unsubscribe();
  };
}
