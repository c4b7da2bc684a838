// Collects lookup work into bulks: a bulk goes when it holds `maxTasks` tasks or when
// its oldest task has waited `lingerMs`, whichever comes first.
import type { PartnerWork } from './records.ts';

export interface BatcherOptions {
  maxTasks: number;
  lingerMs: number;
}

export class Batcher {
  readonly #options: BatcherOptions;
  readonly #flush: (batch: PartnerWork[]) => void;
  #batch: PartnerWork[] = [];
  #timer: NodeJS.Timeout | undefined;
  #draining = false;

  constructor(options: BatcherOptions, flush: (batch: PartnerWork[]) => void) {
    this.#options = options;
    this.#flush = flush;
  }

  get size(): number {
    return this.#batch.length;
  }

  add(work: PartnerWork): void {
    work.state = 'queued';
    this.#batch.push(work);
    if (this.#batch.length >= this.#options.maxTasks) this.flush();
    else this.#timer ??= setTimeout(() => this.flush(), this.#draining ? 0 : this.#options.lingerMs);
  }

  /**
   * From now on nothing waits for more tasks: work that still arrives (records being
   * decoded when a drain or stop began) goes out at once instead of after the linger time.
   */
  drain(): void {
    this.#draining = true;
    this.flush();
  }

  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#batch.length === 0) return;
    const batch = this.#batch;
    this.#batch = [];
    for (const work of batch) work.state = 'submitted';
    this.#flush(batch);
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
