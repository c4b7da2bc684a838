// Works through bulk lookups in the background: a few tasks per event-loop turn, then
// setImmediate, so the server keeps answering polls while it matches. Bulks take turns, so a
// small bulk is not stuck behind a large one.

import { isoAt, type Clock } from '../clock.ts';
import type { BulkLookupRecord } from '../state/bulk-lookups.ts';
import type { TaskOutcome, BulkLookupTask } from './bulk-task-result.ts';
import type { LookupParameters } from './lookup-parameters.ts';

export interface BulkRunnerParts {
  clock: Clock;
  tasksPerTurn: number;
  /** The outcome of one task (matched, invalid, or failed by injection). */
  outcomeOf: (task: BulkLookupTask, parameters: LookupParameters, timestamp: string) => TaskOutcome;
  /** The sandbox is frozen (PUT /admin/faults): no task runs until it is not. */
  frozen: () => boolean;
  unfrozen: () => Promise<void>;
}

export class BulkLookupRunner {
  readonly #parts: BulkRunnerParts;
  readonly #queue: BulkLookupRecord[] = [];
  #scheduled: NodeJS.Immediate | undefined;

  constructor(parts: BulkRunnerParts) {
    this.#parts = parts;
  }

  /** Starts a bulk in the background; it is RUNNING from its first turn. */
  enqueue(bulk: BulkLookupRecord): void {
    this.#queue.push(bulk);
    this.#schedule();
  }

  /** Runs a bulk to the end at once (instant mode). */
  runNow(bulk: BulkLookupRecord): void {
    this.#advance(bulk, bulk.tasks.length);
  }

  /** Drops every queued bulk (reset, close); they stay as far as they got. */
  stop(): void {
    if (this.#scheduled) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    this.#queue.length = 0;
  }

  #schedule(): void {
    this.#scheduled ??= setImmediate(() => {
      this.#scheduled = undefined;
      this.#turn();
    });
  }

  #turn(): void {
    // A test reads the audit and counters of a frozen sandbox it is about to kill: tasks that
    // ran meanwhile changed what it read twice.
    if (this.#parts.frozen()) {
      void this.#parts.unfrozen().then(() => this.#schedule());
      return;
    }
    const bulk = this.#queue.shift();
    if (!bulk) return;
    this.#advance(bulk, this.#parts.tasksPerTurn);
    if (bulk.status !== 'FINISHED') this.#queue.push(bulk);
    if (this.#queue.length > 0) this.#schedule();
  }

  #advance(bulk: BulkLookupRecord, taskCount: number): void {
    const { clock, outcomeOf } = this.#parts;
    bulk.status = 'RUNNING';
    const end = Math.min(bulk.tasks.length, bulk.results.length + taskCount);
    for (let index = bulk.results.length; index < end; index++) {
      const task = bulk.tasks[index];
      if (task)
        bulk.results.push({ taskId: task.id, ...outcomeOf(task, bulk.parameters, isoAt(clock.now())) });
    }
    if (bulk.results.length >= bulk.tasks.length) {
      bulk.status = 'FINISHED';
      bulk.finishedAt = clock.now();
    }
  }
}
