// `run`'s built-in schedule of full-storage reruns: at each slot, a rerun job is written
// to the job store, where the executors of every replica pick it up like one started from
// the CLI. Every replica of `run` ticks; they agree through the store, deciding and writing
// the slot's job as one step (RerunJobStore.createJob) against each other and against
// `rerun start` of the same input topic:
// - the job id is the slot's and the input topic's (`scheduled-20250310T020000Z-partners`)
//   and a replica that finds the job written does not write it again, so a slot makes one
//   job. Of two replicas deciding at the same moment one writes it; the other, fenced,
//   decides again and finds it. The input topic is in the id because pipelines of several
//   input topics may share one state topic, and with it the job ids.
// - a slot whose input topic has a rerun that has not ended is skipped and logged, as a
//   Kubernetes CronJob with concurrencyPolicy Forbid does: a rerun that outlasts the
//   interval is not queued behind itself. A `rerun start` deciding at the same moment sees
//   the slot's job, or the slot sees its job: never both written.
// Slots missed while no replica ran are not made up, except, with `catchUp`, the most
// recent one: a nightly rerun missed during a deploy still happens, once, and a replica
// down for a week does not start seven reruns in a row. Off by default, since a rerun
// reads every stored partner and a restart should not start one unasked.
import type { Config } from '../config/index.ts';
import type { Logger } from '../observability/index.ts';
import { RerunError } from './errors.ts';
import { inRunOrder } from './job-order.ts';
import { isEnded, type RerunJob, type RerunJobStore } from './rerun-job.ts';
import { parseInterval, scheduleSlots, type RerunScheduleSpec } from './schedule-slots.ts';
import { MAX_TIMER_MS } from '../timer-limit.ts';

/** Partners per chunk of a scheduled rerun when the configuration names none: the service's maximum. */
export const DEFAULT_SCHEDULED_BATCH_SIZE = 500;
/** Share of each quota window a scheduled rerun may take when the configuration names none. */
export const DEFAULT_SCHEDULED_QUOTA_SHARE = 0.5;
export const SCHEDULED_TAG = 'scheduled';

/** The schedule the configuration asks for, if any (the configuration has validated it). */
export function rerunScheduleSpec(section: Config['rerunSchedule']): RerunScheduleSpec | undefined {
  if (section.cron !== undefined)
    return { cron: section.cron, ...(section.timezone === undefined ? {} : { timezone: section.timezone }) };
  const everyMs = section.every === undefined ? undefined : parseInterval(section.every);
  return everyMs === undefined ? undefined : { everyMs };
}

/**
 * `scheduled-`, the slot in UTC to the second and the input topic, e.g.
 * `scheduled-20250310T020000Z-partners`. With the slot alone, a second pipeline sharing the
 * state topic found the first's job under its slot's id and skipped the slot as made.
 */
export const scheduledJobId = (slot: number, inputTopic: string): string =>
  `scheduled-${new Date(slot)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '')}-${inputTopic}`;

/** What a scheduled job is made of, besides its slot. */
export interface ScheduledJobSettings {
  inputTopic: string;
  /** The schedule's description (ScheduleSlots.description), kept on the job. */
  schedule: string;
  batchSize?: number;
  quotaShare?: number;
}

export type SlotOutcome =
  | { kind: 'created'; jobId: string }
  /** Another replica (or this one, before a restart) wrote the slot's job already. */
  | { kind: 'exists'; jobId: string }
  /** A rerun of the same input topic has not ended: Forbid. */
  | { kind: 'skipped'; jobId: string; activeJobId: string };

export function scheduledJob(slot: number, settings: ScheduledJobSettings): RerunJob {
  return {
    id: scheduledJobId(slot, settings.inputTopic),
    inputTopic: settings.inputTopic,
    filter: {},
    batchSize: settings.batchSize ?? DEFAULT_SCHEDULED_BATCH_SIZE,
    tags: [SCHEDULED_TAG],
    initialize: false,
    dryRun: false,
    quotaShare: settings.quotaShare ?? DEFAULT_SCHEDULED_QUOTA_SHARE,
    schedule: settings.schedule,
    control: 'run',
    createdAt: slot,
    controlAt: slot,
  };
}

/**
 * Decides a slot against the store as it is now, and writes its job when it is due, as one
 * step against every other start of a job of the input topic (createJob): the refusals that
 * `rerun start` throws for a job id taken and a busy topic (--if-idle) are this schedule's
 * 'exists' and 'skipped'.
 */
export async function scheduleSlot(
  store: RerunJobStore,
  slot: number,
  settings: ScheduledJobSettings,
  partitionCount: number,
): Promise<SlotOutcome> {
  const job = scheduledJob(slot, settings);
  const jobId = job.id;
  const admit = async (): Promise<void> => {
    if (store.job(jobId) !== undefined)
      throw new RerunError('RERUN_ALREADY_EXISTS', `rerun ${jobId} exists already`, { details: { jobId } });
    const active = inRunOrder(store).find(
      (other) =>
        other.inputTopic === settings.inputTopic && !isEnded(other, store.progress(other.id), partitionCount),
    );
    if (active)
      throw new RerunError(
        'RERUN_SCOPE_BUSY',
        `rerun ${active.id} of input topic ${settings.inputTopic} has not ended`,
        { details: { inputTopic: settings.inputTopic, activeJobId: active.id } },
      );
  };
  try {
    // 'found': this replica, fenced by another deciding the same slot, found its job.
    const created = await store.createJob(job, admit);
    return { kind: created === 'written' ? 'created' : 'exists', jobId };
  } catch (error) {
    if (!(error instanceof RerunError)) throw error;
    if (error.code === 'RERUN_ALREADY_EXISTS') return { kind: 'exists', jobId };
    if (error.code === 'RERUN_SCOPE_BUSY')
      return { kind: 'skipped', jobId, activeJobId: String(error.details.activeJobId) };
    throw error;
  }
}

/** Time and timers, injected so that tests decide when a slot comes. */
export interface Clock {
  now(): number;
  /** Calls back once after `ms`; the returned function cancels it. */
  setTimer(callback: () => void, ms: number): () => void;
}

/** Timers that do not keep the process alive: shutdown never waits for the next slot. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

export interface RerunScheduleOptions {
  spec: RerunScheduleSpec;
  catchUp: boolean;
  store: RerunJobStore;
  job: Omit<ScheduledJobSettings, 'schedule'>;
  /** Partitions of the input topic now (a job is done when each of them is). */
  partitionCount: () => Promise<number>;
  logger: Logger;
  clock?: Clock;
}

export interface RerunSchedule {
  /** The slot waited for (epoch ms); undefined once stopped or when the schedule has no more. */
  readonly nextSlot: number | undefined;
  /** Cancels the timer and waits for a slot being decided; no job is written afterwards. */
  stop(): Promise<void>;
}

export function startRerunSchedule(options: RerunScheduleOptions): RerunSchedule {
  const { store, logger, catchUp } = options;
  const clock = options.clock ?? systemClock;
  const slots = scheduleSlots(options.spec);
  const settings: ScheduledJobSettings = { ...options.job, schedule: slots.description };
  let stopped = false;
  let nextSlot: number | undefined;
  let cancelTimer = () => {};
  let deciding: Promise<void> = Promise.resolve();

  const decide = async (slot: number) => {
    const slotTime = new Date(slot).toISOString();
    try {
      const outcome = await scheduleSlot(store, slot, settings, await options.partitionCount());
      if (outcome.kind === 'created') logger.info({ ...outcome, slot: slotTime }, 'scheduled rerun created');
      else if (outcome.kind === 'exists')
        logger.debug({ ...outcome, slot: slotTime }, 'scheduled rerun already created');
      else
        logger.warn(
          { ...outcome, slot: slotTime },
          'scheduled rerun skipped: a rerun of the same input topic has not ended',
        );
    } catch (error) {
      // Not retried: a replica that could write the job has, and the next slot comes anyway.
      logger.error({ err: error, slot: slotTime }, 'scheduled rerun could not be created');
    }
  };

  const arm = (from: number) => {
    nextSlot = stopped ? undefined : slots.after(from);
    if (nextSlot === undefined) return;
    const slot = nextSlot;
    const wait = () => {
      const now = clock.now();
      if (now < slot) {
        cancelTimer = clock.setTimer(wait, Math.min(slot - now, MAX_TIMER_MS));
        return;
      }
      deciding = decide(slot).then(() => arm(Math.max(slot, clock.now())));
    };
    wait();
  };

  const now = clock.now();
  const missed = catchUp ? slots.atOrBefore(now) : undefined;
  if (missed !== undefined) deciding = decide(missed).then(() => arm(clock.now()));
  else arm(now);
  logger.info({ schedule: slots.description, catchUp }, 'rerun schedule started');

  return {
    get nextSlot() {
      return nextSlot;
    },
    async stop() {
      stopped = true;
      cancelTimer();
      nextSlot = undefined;
      await deciding;
    },
  };
}
