// Runs one bulk lookup: submit, record the bulk in the ledger before polling (so a
// restart resumes it instead of paying again), poll with backoff until it is final,
// then read every page of results.
import { backoffDelay, type BackoffOptions } from '../retry/backoff.ts';
import type { SourcePosition } from '../pipeline/records.ts';
import type { JsonRecord } from '../mapping/lookup-task.ts';
import { RefDataPagingError } from '../refdata/errors.ts';
import type { BulkLookupApi, BulkTaskResult, LookupParameters } from './bulk-api.ts';
import type { BulkLedger } from './bulk-ledger.ts';
import { BulkError } from './errors.ts';
import { tracedBulkApi } from './traced-bulk-api.ts';

export interface BulkTask {
  taskId: string;
  jsonRecord: JsonRecord;
  hash: string;
  positions: SourcePosition[];
}

export interface BulkRunnerOptions {
  polling: BackoffOptions & { pageSize: number; maxPolls: number };
  lookup: LookupParameters;
  sleep?: (ms: number) => Promise<void>;
}

const FINAL_STATUSES = new Set(['FINISHED', 'FAILED', 'CANCELED']);
const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class BulkRunner {
  readonly #api: BulkLookupApi;
  readonly #ledger: BulkLedger;
  readonly #options: BulkRunnerOptions;
  /** Results of bulks already read, for records of a resumed bulk that arrive later. */
  readonly #resumed = new Map<string, Promise<Map<string, BulkTaskResult>>>();
  #closed = false;

  constructor(api: BulkLookupApi, ledger: BulkLedger, options: BulkRunnerOptions) {
    this.#api = tracedBulkApi(api);
    this.#ledger = ledger;
    this.#options = options;
  }

  /**
   * Submits the bulk and records it in the ledger; resolves with its id once the ledger has
   * it, so that it is never paid for twice. Read its results with collect(). `timeoutMs`
   * overrides the client's time-out of the create.
   */
  async submit(submissionId: string, tasks: BulkTask[], timeoutMs?: number): Promise<string> {
    const { id } = await this.#api.createBulk(
      tasks.map((t) => ({ id: t.taskId, jsonRecord: t.jsonRecord })),
      this.#options.lookup,
      timeoutMs,
    );
    const recorded = tasks.map(({ taskId, hash, positions }) => ({ taskId, hash, positions }));
    // The bulk exists and is paid for: its record is written, however long the state topic
    // takes to come back, rather than the bulk being submitted (and paid for) again.
    const sleep = this.#options.sleep ?? defaultSleep;
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.#ledger.record(submissionId, id, recorded);
        return id;
      } catch (error) {
        if (this.#closed) throw error;
        await sleep(backoffDelay(attempt, this.#options.polling));
      }
    }
  }

  /** Stops polling: collect() ends with BULK_ABANDONED at its next poll. */
  close(): void {
    this.#closed = true;
  }

  /** Results of a bulk an earlier run submitted; read once, shared by every record in it. */
  resume(bulkId: string): Promise<Map<string, BulkTaskResult>> {
    let results = this.#resumed.get(bulkId);
    if (!results) {
      results = this.collect(bulkId);
      this.#resumed.set(bulkId, results);
      results.catch(() => this.#resumed.delete(bulkId));
    }
    return results;
  }

  /** Forgets resumed bulks' results once no record can ask for them any more. */
  forgetResumed(bulkId: string): void {
    this.#resumed.delete(bulkId);
  }

  async collect(bulkId: string): Promise<Map<string, BulkTaskResult>> {
    const { polling } = this.#options;
    const sleep = this.#options.sleep ?? defaultSleep;
    let page = await this.#api.readBulk(bulkId, { limit: polling.pageSize });
    for (let poll = 1; !FINAL_STATUSES.has(page.status); poll += 1) {
      if (this.#closed)
        throw new BulkError('BULK_ABANDONED', `stopped while bulk ${bulkId} was ${page.status}`);
      if (poll > polling.maxPolls) {
        throw new BulkError(
          'BULK_POLL_TIMEOUT',
          `bulk ${bulkId} still ${page.status} after ${polling.maxPolls} polls`,
        );
      }
      await sleep(backoffDelay(poll, polling));
      page = await this.#api.readBulk(bulkId, { limit: polling.pageSize });
    }
    if (page.status !== 'FINISHED') {
      throw new BulkError(
        'BULK_FAILED',
        `bulk ${bulkId} ended ${page.status}: ${page.message ?? 'no reason given'}`,
        {
          details: { bulkId },
        },
      );
    }
    const results = new Map<string, BulkTaskResult>();
    // Pages handing back a cursor asked with before (the last one, or one before it: A, B, A)
    // would be read for ever.
    const asked = new Set<string>();
    for (;;) {
      for (const result of page.results) results.set(result.taskId, result);
      const startAfter = page.nextStartAfter;
      if (!startAfter) return results;
      if (asked.has(startAfter)) throw new RefDataPagingError('getBulkLookup', startAfter);
      if (this.#closed)
        throw new BulkError('BULK_ABANDONED', `stopped while reading bulk ${bulkId}'s results`);
      asked.add(startAfter);
      page = await this.#api.readBulk(bulkId, { limit: polling.pageSize, startAfter });
    }
  }
}
