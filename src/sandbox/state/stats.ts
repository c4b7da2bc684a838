// Counters for tests and benchmarks (GET /admin/stats): they prove, for example, that the
// pipeline submitted no bulk twice or asked for one token for many calls.

export interface SandboxStatsSnapshot {
  requestsByOperation: Record<string, number>;
  bulkSubmissions: number;
  bulkTasks: number;
  failedBulkTasks: number;
  /** Requests that reached the token endpoint, answered or refused. */
  tokenRequests: number;
  tokensIssued: number;
  quotaConsumeRequests: number;
  /** Sum of the quota amounts consumed with answer OK. */
  quotaConsumed: number;
  quotaOverLimit: number;
  /** Consumes with quotaAmount -1 (jobs) answered OK. */
  quotaJobUnits: number;
  injectedServerErrors: number;
  injectedThrottles: number;
  /** Connections reset without an answer (`resetRate`). */
  injectedResets: number;
  jobsCreated: number;
  /** Jobs the fault chose to die, counted when created (they die later, on the clock). */
  jobsDied: number;
}

type Counter = Exclude<keyof SandboxStatsSnapshot, 'requestsByOperation' | 'tokenRequests'>;

const zeroCounters = (): Record<Counter, number> => ({
  bulkSubmissions: 0,
  bulkTasks: 0,
  failedBulkTasks: 0,
  tokensIssued: 0,
  quotaConsumeRequests: 0,
  quotaConsumed: 0,
  quotaOverLimit: 0,
  quotaJobUnits: 0,
  injectedServerErrors: 0,
  injectedThrottles: 0,
  injectedResets: 0,
  jobsCreated: 0,
  jobsDied: 0,
});

export class SandboxStats {
  #counters = zeroCounters();
  #requests = new Map<string, number>();

  add(counter: Counter, amount = 1): void {
    this.#counters[counter] += amount;
  }

  countRequest(operationId: string): void {
    this.#requests.set(operationId, (this.#requests.get(operationId) ?? 0) + 1);
  }

  snapshot(): SandboxStatsSnapshot {
    return {
      requestsByOperation: Object.fromEntries(this.#requests),
      tokenRequests: this.#requests.get('requestToken') ?? 0,
      ...this.#counters,
    };
  }

  reset(): void {
    this.#counters = zeroCounters();
    this.#requests.clear();
  }
}
