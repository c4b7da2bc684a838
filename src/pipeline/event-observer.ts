// Publishes what the pipeline does on the namespaced diagnostics channels
// (observability/events.ts), where metrics and any other subscriber pick it up.
import { pipelineEvents } from '../observability/events.ts';
import type { IntakePauseReason, RecordOutcome, RecordSource } from '../observability/metrics.ts';
import type { PipelineObserver } from './ports.ts';

export function eventObserver(source: RecordSource): PipelineObserver {
  return {
    recordIn: () => pipelineEvents.records.publish({ type: 'in', source, count: 1 }),
    recordOut: (outcome, reused) =>
      pipelineEvents.records.publish({
        type: 'out',
        outcome: (reused ? 'SKIPPED_UNCHANGED' : outcome) as RecordOutcome,
        count: 1,
      }),
    redelivered: (count) => pipelineEvents.records.publish({ type: 'redelivered', count }),
    intentAdopted: (count, paid) => pipelineEvents.records.publish({ type: 'adopted', paid, count }),
    keyNotPartnerId: (_position, missing) =>
      pipelineEvents.records.publish({ type: 'key-not-partner-id', missing, count: 1 }),
    deadLetter: (stage, code) =>
      pipelineEvents.records.publish({ type: 'dead-letter', reason: `${stage}/${code}`, count: 1 }),
    bulkSubmitted: (tasks) => pipelineEvents.bulk.publish({ type: 'submitted', bulkId: '', tasks }),
    bulkFinished: (bulkId, tasks, ms) =>
      pipelineEvents.bulk.publish({ type: 'completed', bulkId, tasks, seconds: ms / 1000 }),
    bulkFailed: (tasks, code, ms) =>
      pipelineEvents.bulk.publish({ type: 'failed', bulkId: '', tasks, seconds: ms / 1000, code }),
    retry: (code, attempt) =>
      pipelineEvents.retry.publish({ operation: 'bulk-lookup', reason: code, attempt }),
    intakePaused: (reason) =>
      pipelineEvents.intake.publish({ type: 'paused', reason: reason as IntakePauseReason }),
    intakeResumed: (reason) =>
      pipelineEvents.intake.publish({ type: 'resumed', reason: reason as IntakePauseReason }),
    quotaUsed: (amount) => pipelineEvents.quota.publish({ type: 'consumed', tasks: amount }),
    quotaOverLimit: () => pipelineEvents.quota.publish({ type: 'over-limit' }),
  };
}
