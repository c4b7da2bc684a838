// Writes a piece of work's outputs to the sink; only once they are durable does the work
// count as finished. An output that can never fit the topic (too large for the broker)
// becomes a dead letter with its reason instead of blocking its partition; any other
// failure to write is fatal: nothing is committed, the records are read again after a
// restart.
import { isPartnerEnrichError, type PartnerEnrichError } from '../errors.ts';
import { PipelineError } from './errors.ts';
import { deadLetter, withoutValue, type OutputMessage } from './outputs.ts';
import type { OutputSink, PipelineObserver } from './ports.ts';
import type { InputRecord } from './records.ts';

/** The sink's code for one output that exceeds the topic's size limit. */
const OUTPUT_TOO_LARGE = 'OUTPUT_TOO_LARGE';

export class OutputWriter {
  readonly #sink: OutputSink;
  readonly #observer: PipelineObserver;
  readonly #fatal: (error: PipelineError) => void;
  readonly #now: () => number;
  readonly #writes = new Set<Promise<void>>();

  constructor(
    sink: OutputSink,
    observer: PipelineObserver,
    fatal: (error: PipelineError) => void,
    now: () => number,
  ) {
    this.#sink = sink;
    this.#observer = observer;
    this.#fatal = fatal;
    this.#now = now;
  }

  /**
   * Writes `messages` for `inputs`; calls `then` once they (or the inputs' dead letters) are
   * durable. Never rejects: a failure is routed to the fatal handler.
   */
  write(messages: OutputMessage[], inputs: InputRecord[], then: () => void): void {
    const write = this.#write(messages, inputs)
      .then(() => then())
      .catch((error: unknown) => this.#fatal(outputFailed(error)));
    this.#writes.add(write);
    void write.finally(() => this.#writes.delete(write));
  }

  /** Resolves when every write started so far has ended. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#writes]);
  }

  async #write(messages: OutputMessage[], inputs: InputRecord[]): Promise<void> {
    try {
      await this.#sink.send(messages);
    } catch (error) {
      if (!isTooLarge(error)) throw error;
      for (const _ of inputs) this.#observer.deadLetter?.('output', error.code);
      const letters = inputs.map((input) => deadLetter(input, 'output', error, 1, this.#now()));
      try {
        await this.#sink.send(letters);
      } catch (again) {
        // The record's own bytes do not fit the dead-letter topic: keep the reason, drop the value.
        if (!isTooLarge(again)) throw again;
        await this.#sink.send(letters.map(withoutValue));
      }
    }
  }
}

const isTooLarge = (error: unknown): error is PartnerEnrichError =>
  isPartnerEnrichError(error) && error.code === OUTPUT_TOO_LARGE;

const outputFailed = (error: unknown): PipelineError =>
  new PipelineError('PIPELINE_OUTPUT_FAILED', `outputs could not be written: ${(error as Error).message}`, {
    cause: error,
  });
