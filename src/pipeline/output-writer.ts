// Writes a piece of work's outputs to the sink; only once they are durable does the work
// count as finished. An output that can never fit the topic (too large for the broker)
// becomes a dead letter with its reason instead of blocking its partition; any other
// failure to write is fatal: nothing is committed, the records are read again after a
// restart. Exactly-once: outputs of input records are checked and staged for their
// partition's next transaction instead, and the work is finished once staged; reruns'
// outputs (no input offset to commit them with) are still written at once, held only while
// the group rebalances (see hold()).
import { isPartnerEnrichError, type PartnerEnrichError } from '../errors.ts';
import { PipelineError } from './errors.ts';
import { deadLetter, withoutValue, type OutputMessage } from './outputs.ts';
import type { PartnerState } from '../state/partner-state.ts';
import type { OutputStaging } from './output-staging.ts';
import type { OutputSink, PartitionRef, PipelineObserver, TransactionalOutputs } from './ports.ts';
import type { InputRecord } from './records.ts';
import { isRerunTopic } from './rerun-work.ts';
import { traceProduce } from '../observability/tracing.ts';

/** Exactly-once: where outputs of input records wait for their transaction, and the state they stage. */
export interface Transactional {
  outputs: TransactionalOutputs;
  staging: OutputStaging;
  state: PartnerState;
}

/** The sink's code for one output that exceeds the topic's size limit. */
const OUTPUT_TOO_LARGE = 'OUTPUT_TOO_LARGE';

export class OutputWriter {
  readonly #sink: OutputSink;
  readonly #observer: PipelineObserver;
  readonly #fatal: (error: PipelineError) => void;
  readonly #now: () => number;
  readonly #writes = new Set<Promise<void>>();
  readonly #transactional: Transactional | undefined;
  /** Writes held while the group rebalances (see hold()). */
  #held: { messages: OutputMessage[]; inputs: InputRecord[]; then: Written; owned?: Owned }[] | undefined;

  constructor(
    sink: OutputSink,
    observer: PipelineObserver,
    fatal: (error: PipelineError) => void,
    now: () => number,
    transactional?: Transactional,
  ) {
    this.#sink = sink;
    this.#observer = observer;
    this.#fatal = fatal;
    this.#now = now;
    this.#transactional = transactional;
  }

  /**
   * Writes `messages` for `inputs`; calls `then` once they (or the inputs' dead letters) are
   * durable, telling whether the outputs went out (dead letters' own bytes may have been
   * dropped) or the inputs became dead letters OUTPUT_TOO_LARGE instead. Never rejects: a
   * failure is routed to the fatal handler. `owned` says whether the work is still this
   * member's when writes held during a rebalance are released (by default: whether the
   * inputs' partition is owned; a rerun's inputs are no input partition's).
   */
  write(messages: OutputMessage[], inputs: InputRecord[], then: Written, owned?: Owned): void {
    traceProduce(messages, inputs, (durable) =>
      this.#deliver(
        messages,
        inputs,
        (written) => {
          durable();
          then(written);
        },
        owned,
      ),
    );
  }

  #deliver(messages: OutputMessage[], inputs: InputRecord[], then: Written, owned?: Owned): void {
    const first = inputs[0];
    if (this.#transactional && first && !isRerunTopic(first.position.topic)) {
      try {
        this.#stage(this.#transactional, messages, inputs, then);
      } catch (error) {
        this.#fatal(outputFailed(error));
      }
      return;
    }
    if (this.#held && first) {
      this.#held.push({ messages, inputs, then, ...(owned ? { owned } : {}) });
      return;
    }
    const write = this.#write(messages, inputs)
      .then((written) => then(written))
      .catch((error: unknown) => this.#fatal(outputFailed(error)));
    this.#writes.add(write);
    void write.finally(() => this.#writes.delete(write));
  }

  /**
   * OUTPUT_TOO_LARGE when the outputs of `input` could never be written: one of `least` (the
   * least they can be) over its topic's limit. Only an input of half the sink's smallest
   * limit or more is checked: what the outputs carry of a record is at most about its own
   * size (the partner record in Avro, the input's format or denser, and a few fields), so a
   * smaller one cannot make them too large and is not encoded once more to find out.
   */
  tooLarge(input: InputRecord, least: () => OutputMessage[]): PartnerEnrichError | undefined {
    const sink = this.#sink;
    if (!sink.check || !sink.smallestLimit || (input.value?.length ?? 0) * 2 < sink.smallestLimit())
      return undefined;
    try {
      sink.check(least());
      return undefined;
    } catch (error) {
      // Any other failure to encode is met, and reported, when the outputs are written.
      return isTooLarge(error) ? error : undefined;
    }
  }

  /**
   * The group rebalances: outputs are held until the new assignment is known. A partition
   * that moves is read again by its new owner from the committed offset: what its former
   * owner wrote meanwhile would be written twice. A rerun's outputs too: their storage
   * records are partner state of the partition, and its new owner restores that state when
   * it is assigned; one written by the former owner after that is missing from the new
   * owner's state (its next record of the partner was decided and stored on the older
   * state, the rerun's result lost), or lands after the new owner's own newer one. The
   * partition's next owner redoes the rerun's chunk. (Exactly-once holds only reruns'
   * outputs: a fenced transaction's outputs are never visible, a rerun's are written
   * outside any transaction.)
   */
  hold(): void {
    this.#held ??= [];
  }

  /** The assignment is known: held writes of work still owned go out, the others are dropped. */
  release(owned: (partition: PartitionRef) => boolean): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const write of held)
      if (write.owned ? write.owned() : owned((write.inputs[0] as InputRecord).position))
        this.#deliver(write.messages, write.inputs, write.then, write.owned);
  }

  /** Resolves when every write started so far has ended. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#writes]);
  }

  /** Staged under the highest offset of the inputs; `then` runs with its state writes staged alike. */
  #stage(
    { outputs, staging, state }: Transactional,
    messages: OutputMessage[],
    inputs: InputRecord[],
    then: Written,
  ): void {
    let prepared: unknown[] | undefined;
    let written = true;
    try {
      prepared = outputs.prepare(messages);
    } catch (error) {
      if (!isTooLarge(error)) throw error;
      let refused = error;
      for (const fallback of this.#fallbacks(messages, inputs, error)) {
        try {
          prepared = outputs.prepare(fallback.messages);
          written = fallback.written;
          break;
        } catch (again) {
          if (!isTooLarge(again)) throw again;
          refused = again;
        }
      }
      if (prepared === undefined) throw refused;
    }
    const { topic, partition } = (inputs[0] as InputRecord).position;
    const offsets = inputs.map((input) => input.position.offset);
    const offset = Math.max(...offsets);
    staging.stage({ topic, partition }, offset, prepared, Math.min(...offsets));
    state.staged({ topic, partition }, offset, () => then(written));
  }

  async #write(messages: OutputMessage[], inputs: InputRecord[]): Promise<boolean> {
    try {
      await this.#sink.send(messages);
      return true;
    } catch (error) {
      if (!isTooLarge(error)) throw error;
      let refused = error;
      for (const fallback of this.#fallbacks(messages, inputs, error)) {
        try {
          await this.#sink.send(fallback.messages);
          return fallback.written;
        } catch (again) {
          if (!isTooLarge(again)) throw again;
          refused = again;
        }
      }
      throw refused;
    }
  }

  /**
   * What goes out instead of outputs refused as too large, in order (the sink refuses before
   * sending anything): the same outputs with dead letters' own bytes dropped, their reason
   * kept (a dead letter of a record too large for the dead-letter topic); else the inputs as
   * dead letters OUTPUT_TOO_LARGE; else those without their bytes.
   */
  *#fallbacks(
    messages: OutputMessage[],
    inputs: InputRecord[],
    error: PartnerEnrichError,
  ): Generator<{ messages: OutputMessage[]; written: boolean }> {
    if (messages.some((message) => message.output === 'deadLetters'))
      yield {
        messages: messages.map((message) =>
          message.output === 'deadLetters' ? withoutValue(message) : message,
        ),
        written: true,
      };
    for (const _ of inputs) this.#observer.deadLetter?.('output', error.code);
    const letters = inputs.map((input) => deadLetter(input, 'output', error, 1, this.#now()));
    yield { messages: letters, written: false };
    yield { messages: letters.map(withoutValue), written: false };
  }
}

/** Called once outputs are durable: `written` false when the inputs became dead letters instead. */
type Written = (written: boolean) => void;

/** Whether the work the outputs are of is still this member's. */
type Owned = () => boolean;

const isTooLarge = (error: unknown): error is PartnerEnrichError =>
  isPartnerEnrichError(error) && error.code === OUTPUT_TOO_LARGE;

const outputFailed = (error: unknown): PipelineError =>
  new PipelineError('PIPELINE_OUTPUT_FAILED', `outputs could not be written: ${(error as Error).message}`, {
    cause: error,
    // The log shows the error's own members only: the sink's code would be lost in the cause.
    details: isPartnerEnrichError(error) ? { causeCode: error.code } : {},
  });
