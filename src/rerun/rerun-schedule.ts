// `run`'s built-in schedule of full-storage reruns: at each slot, a rerun job is written
// to the job store, where the executors of every replica pick it up like one started from
// the CLI. Every replica of `run` ticks; they agree through the store:
// - the job id is the slot's (`scheduled-20250310T020000Z`) and a replica that finds the
//   job written does not write it again, so a slot makes one job. Two replicas that check
//   at the same moment both write, with the same content (createdAt is the slot, not the
//   clock), so the second write changes nothing.
// - a slot whose input topic has a rerun that has not ended is skipped and logged, as a
//   Kubernetes CronJob with concurrencyPolicy Forbid does: a rerun that outlasts the
//   interval is not queued behind itself.
// Slots missed while no replica ran are not made up, except, with `catchUp`, the most
// recent one: a nightly rerun missed during a deploy still happens, once, and a replica
// down for a week does not start seven reruns in a row. Off by default, since a rerun
// reads every stored partner and a restart should not start one unasked.
import type { Config } from '../config/index.ts';
import type { Logger } from '../observability/index.ts';
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

/** `scheduled-` and the slot in UTC to the second, e.g. `scheduled-20250310T020000Z`. */
export const scheduledJobId = (slot: number): string =>
  `scheduled-${new Date(slot)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '')}`;

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
    id: scheduledJobId(slot),
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

/** Decides a slot against the store as it is now, and writes its job when it is due. */
export async function scheduleSlot(
  store: RerunJobStore,
  slot: number,
  settings: ScheduledJobSettings,
  partitionCount: number,
): Promise<SlotOutcome> {
  const jobId = scheduledJobId(slot);
  await store.load();
  if (store.job(jobId) !== undefined) return { kind: 'exists', jobId };
  const active = inRunOrder(store).find(
    (job) => job.inputTopic === settings.inputTopic && !isEnded(job, store.progress(job.id), partitionCount),
  );
  if (active) return { kind: 'skipped', jobId, activeJobId: active.id };
  await store.saveJob(scheduledJob(slot, settings));
  return { kind: 'created', jobId };
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
