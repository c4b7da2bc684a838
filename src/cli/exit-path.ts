// How a long-running command (`run`) goes down. Every reason to stop takes the same way out:
// a signal, a fatal pipeline failure, or an error nothing handled. Once a stop is requested
// the exit is bounded: what does not close within the bound is cut off, a second signal cuts
// it off at once, so no hung client can keep a replica alive and "healthy".
import type { Logger } from '../observability/index.ts';
import { reportFailure } from './failure.ts';

type FailureOrigin = 'start' | 'pipeline' | 'unhandledRejection' | 'uncaughtException';

export type StopReason =
  { kind: 'signal'; signal: NodeJS.Signals } | { kind: 'failure'; origin: FailureOrigin; error: unknown };

export interface ExitPathOptions {
  logger: Logger;
  /** How long closing may take after a stop is requested, before the process exits anyway. */
  boundMs: number;
}

/** What still holds the event loop once everything was closed gets this long. */
const LINGER_MS = 2_000;

export class ExitPath {
  readonly #logger: Logger;
  readonly #boundMs: number;
  readonly #stop = Promise.withResolvers<StopReason>();
  #reason: StopReason | undefined;
  #failed = false;
  /** The close step under way: a stop cut off at the bound says where it hung. */
  #closing: string | undefined;

  constructor(options: ExitPathOptions) {
    this.#logger = options.logger;
    this.#boundMs = options.boundMs;
    const onSignal = (signal: NodeJS.Signals) => this.#request({ kind: 'signal', signal });
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    // A hang-up (the terminal or session `run` was started from closed) stops it the same way:
    // unhandled, it ended the process at once, without committing what was done or leaving the group.
    process.on('SIGHUP', onSignal);
    process.on('unhandledRejection', (error) => this.fail('unhandledRejection', error));
    process.on('uncaughtException', (error) => this.fail('uncaughtException', error));
  }

  /** The first reason to stop. */
  get stopping(): Promise<StopReason> {
    return this.#stop.promise;
  }

  /** Why the process goes down for good after a failure; undefined while healthy or on a requested stop. */
  get failure(): string | undefined {
    const reason = this.#reason;
    if (!this.#failed || reason === undefined) return undefined;
    return reason.kind === 'failure' ? `${reason.origin}: ${String(reason.error)}` : 'failed while stopping';
  }

  fail(origin: Exclude<FailureOrigin, 'start'>, error: unknown): void {
    this.#logger.fatal({ err: error, origin }, 'fatal failure: stopping');
    this.#failed = true;
    this.#request({ kind: 'failure', origin, error });
  }

  /**
   * A failed start closes what it opened within the bound of a stop: past it, or on a signal
   * meanwhile, the start's error is reported as the command reports it and the process exits
   * with its code at once.
   */
  failStart(error: unknown): void {
    this.#logger.error({ err: error }, 'start failed: closing what was opened');
    this.#failed = true;
    this.#request({ kind: 'failure', origin: 'start', error }, () => process.exit(reportFailure(error)));
  }

  /** Names the close step that begins now (logged at debug; named at the bound if it hangs). */
  closing(step: string): void {
    this.#closing = step;
    this.#logger.debug({ step }, 'closing');
  }

  /** The promise's value, or undefined when a stop is requested first (e.g. SIGTERM during start-up). */
  async until<T>(promise: Promise<T>): Promise<T | undefined> {
    return Promise.race([promise, this.#stop.promise.then(() => undefined)]);
  }

  /** Ends the process once everything was closed: 0 after a requested stop, 1 after a failure. */
  exit(): void {
    process.exitCode = this.#failed ? 1 : 0;
    // Nothing of ours is open any more; a library timer or socket left behind is not worth
    // waiting for, and must not keep the process up.
    setTimeout(() => {
      this.#logger.warn({ lingerMs: LINGER_MS }, 'closed, but something still holds the event loop: exiting');
      process.exit();
    }, LINGER_MS).unref();
  }

  #request(reason: StopReason, pastBound = () => process.exit(1)): void {
    const first = this.#reason;
    if (first !== undefined) {
      if (reason.kind === 'signal') {
        this.#logger.fatal({ signal: reason.signal }, 'second signal while stopping: exiting now');
        // A failed start keeps its code (2 for the product's errors) and its one-line report: a
        // supervisor's stop during its close made it an exit 1 with the error only in the log.
        process.exit(first.kind === 'failure' && first.origin === 'start' ? reportFailure(first.error) : 1);
      }
      return;
    }
    this.#reason = reason;
    if (reason.kind === 'signal') this.#logger.info({ signal: reason.signal }, 'stop requested');
    setTimeout(() => {
      this.#logger.fatal(
        { boundMs: this.#boundMs, closing: this.#closing },
        'did not stop in time: exiting now',
      );
      pastBound();
    }, this.#boundMs).unref();
    this.#stop.resolve(reason);
  }
}
