// Following a rerun until it ends: every record written for it (or for a job it waits for)
// redraws the view, on a terminal as a progress bar, otherwise as a log line per change.
import cliProgress from 'cli-progress';
import { RerunError } from '../rerun/errors.ts';
import type { RerunView } from '../rerun/rerun-view.ts';
import { reportFailure } from './failure.ts';
import type { RerunContext } from './rerun-context.ts';
import { describeRerun, duration, progressLine, rate } from './rerun-report.ts';
import { MAX_TIMER_MS } from '../timer-limit.ts';

/**
 * Beyond the CLI's 0, 1 (bad usage, unexpected failure) and 2 (an error with a code): what a
 * script or a CronJob must tell apart.
 */
export const RERUN_EXIT_CODES = {
  /** A followed job ended DIED or CANCELED. */
  notFinished: 3,
  /** A followed job had not ended after --timeout; it goes on. */
  stillRunning: 4,
  /** `start --if-idle` found a job of the same input topic not ended, and wrote nothing. */
  scopeBusy: 5,
  /** pause, resume, cancel or throttle of a job that ended. */
  ended: 6,
} as const;

/** Views without a record arriving still move on the clock (SCHEDULED, time left). */
const REDRAW_MS = 1_000;

export interface Followed {
  view: RerunView;
  timedOut: boolean;
}

/** Follows the job until it ends, or `timeoutMs` (0: no limit) passed. */
export async function followRerun(
  context: RerunContext,
  jobId: string,
  timeoutMs: number,
): Promise<Followed> {
  const display = progressDisplay(process.stderr, jobId);
  let last = await context.view(context.existing(jobId));
  display.update(last);
  if (last.ended) {
    display.stop();
    return { view: last, timedOut: false };
  }
  const done = Promise.withResolvers<Followed>();
  // Records arrive in bursts: one redraw at a time, and one more if any arrived meanwhile.
  let drawing: Promise<void> | undefined;
  let again = false;
  const redraw = (): void => {
    if (drawing) {
      again = true;
      return;
    }
    drawing = (async () => {
      do {
        again = false;
        last = await context.view(context.existing(jobId));
        display.update(last);
        if (last.ended) done.resolve({ view: last, timedOut: false });
      } while (again);
    })()
      .catch(done.reject)
      .finally(() => (drawing = undefined));
  };
  const unfollow = await context.store.follow(redraw, done.reject);
  const ticker = setInterval(redraw, REDRAW_MS);
  // setTimeout fires after 1 ms when asked for more than 2^31-1 ms (about 24.8 days): a
  // --timeout of 30 days timed out at once (exit 4). A longer one is waited for in steps.
  const deadline = Date.now() + timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const expireAtDeadline = (): void => {
    const left = deadline - Date.now();
    if (left <= 0) done.resolve({ view: last, timedOut: true });
    else timer = setTimeout(expireAtDeadline, Math.min(left, MAX_TIMER_MS));
  };
  if (timeoutMs > 0) expireAtDeadline();
  try {
    return await done.promise;
  } finally {
    clearInterval(ticker);
    clearTimeout(timer);
    display.stop();
    await unfollow();
  }
}

/** Prints the job where following left it (the change report included) and sets the exit code. */
export function reportFollowed({ view, timedOut }: Followed, json: boolean): void {
  console.log(json ? JSON.stringify(view, null, 2) : describeRerun(view));
  const details = { jobId: view.job.id, status: view.status };
  if (timedOut) {
    reportFailure(
      new RerunError(
        'RERUN_WAIT_TIMEOUT',
        `rerun ${view.job.id} is ${view.status} after --timeout; it goes on`,
        {
          details,
        },
      ),
    );
    process.exitCode = RERUN_EXIT_CODES.stillRunning;
  } else if (view.status !== 'FINISHED') {
    const why = view.message === undefined ? '' : `: ${view.message}`;
    reportFailure(
      new RerunError('RERUN_NOT_FINISHED', `rerun ${view.job.id} ${view.status}${why}`, { details }),
    );
    process.exitCode = RERUN_EXIT_CODES.notFinished;
  }
}

interface ProgressDisplay {
  update(view: RerunView): void;
  stop(): void;
}

function progressDisplay(stream: NodeJS.WriteStream, jobId: string): ProgressDisplay {
  if (!stream.isTTY) {
    let shown: string | undefined;
    return {
      update: (view) => {
        // The time left moves with the clock alone; a line is written when the job moved.
        const line = progressLine(view, false);
        if (line === shown) return;
        shown = line;
        stream.write(`${progressLine(view)}\n`);
      },
      stop: () => {},
    };
  }
  const bar = new cliProgress.SingleBar(
    { stream, format: `rerun ${jobId} [{bar}] {percentage}% | {status} | {rate} | ETA {eta}` },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update: (view) => {
      const payload = {
        status: view.paused ? `${view.status} (paused)` : view.status,
        rate: rate(view),
        eta: view.etaMs === undefined ? '-' : duration(view.etaMs),
      };
      if (started) bar.update(view.progress, payload);
      else bar.start(100, view.progress, payload);
      started = true;
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}
