// Decides each bulk task's outcome: an injected failure first (the fault's share), else the
// lookup. In instant mode outcomes are cached by task content and parameters, so a benchmark
// that replays the same records measures the pipeline rather than the matcher.

import type { Faults } from '../state/faults.ts';
import type { SandboxStats } from '../state/stats.ts';
import {
  failedTaskOutcome,
  lookupTaskOutcome,
  type BulkLookupTask,
  type TaskOutcome,
} from './bulk-task-result.ts';
import type { LookupParameters } from './lookup-parameters.ts';
import type { LookupService } from './lookup-service.ts';

/** Bounds the instant-mode cache; past it the cache starts over rather than growing without end. */
const MAX_CACHED_OUTCOMES = 200_000;

export class TaskOutcomes {
  readonly #lookups: LookupService;
  readonly #faults: Faults;
  readonly #stats: SandboxStats;
  readonly #cache: Map<string, TaskOutcome> | undefined;

  constructor(lookups: LookupService, faults: Faults, stats: SandboxStats, options: { cache: boolean }) {
    this.#lookups = lookups;
    this.#faults = faults;
    this.#stats = stats;
    this.#cache = options.cache ? new Map() : undefined;
  }

  outcomeOf(task: BulkLookupTask, parameters: LookupParameters, timestamp: string): TaskOutcome {
    if (this.#faults.taskFails()) {
      this.#stats.add('failedBulkTasks');
      return failedTaskOutcome(timestamp);
    }
    if (!this.#cache) return lookupTaskOutcome(this.#lookups, task, parameters, timestamp);
    const { configurationId: _configurationId, ...matchParameters } = parameters;
    const key = JSON.stringify([task.businessPartner, matchParameters]);
    let outcome = this.#cache.get(key);
    if (!outcome) {
      if (this.#cache.size >= MAX_CACHED_OUTCOMES) this.#cache.clear();
      outcome = lookupTaskOutcome(this.#lookups, task, parameters, timestamp);
      this.#cache.set(key, outcome);
    }
    return outcome;
  }

  clear(): void {
    this.#cache?.clear();
  }
}
