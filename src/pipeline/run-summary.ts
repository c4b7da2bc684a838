// Counts of one run, kept by observing the pipeline: what the demo's summary table and
// the tests read. Metrics (observability/) observe the same events for Prometheus.
import type { PipelineObserver } from './ports.ts';

export class RunSummary implements PipelineObserver {
  readonly startedAt = Date.now();
  recordsIn = 0;
  readonly outcomes = new Map<string, number>();
  reused = 0;
  readonly deadLetters = new Map<string, number>();
  bulks = 0;
  tasksSubmitted = 0;
  quotaConsumed = 0;
  readonly pauses = new Map<string, number>();
  retries = 0;

  recordIn(): void {
    this.recordsIn += 1;
  }

  recordOut(outcome: string, reused: boolean): void {
    this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + 1);
    if (reused) this.reused += 1;
  }

  deadLetter(stage: string, code: string): void {
    const reason = `${stage}/${code}`;
    this.deadLetters.set(reason, (this.deadLetters.get(reason) ?? 0) + 1);
  }

  bulkSubmitted(tasks: number): void {
    this.bulks += 1;
    this.tasksSubmitted += tasks;
  }

  quotaUsed(amount: number): void {
    this.quotaConsumed += amount;
  }

  intakePaused(reason: string): void {
    this.pauses.set(reason, (this.pauses.get(reason) ?? 0) + 1);
  }

  retry(): void {
    this.retries += 1;
  }

  get deadLettered(): number {
    return [...this.deadLetters.values()].reduce((sum, n) => sum + n, 0);
  }

  /** Records with a final output: every outcome, plus input rejected before any lookup. */
  get finished(): number {
    const looked = [...this.outcomes.values()].reduce((sum, n) => sum + n, 0);
    const rejected = [...this.deadLetters]
      .filter(([r]) => !r.startsWith('lookup/'))
      .reduce((sum, [, n]) => sum + n, 0);
    return looked + rejected;
  }

  elapsedSeconds(now = Date.now()): number {
    return Math.max(0.001, (now - this.startedAt) / 1000);
  }
}
