// `rerun start`: writes a rerun job to the state topic; the `run` replicas that own the input
// topic's partitions execute it (one job of an input topic at a time, in creation order).
import { randomBytes } from 'node:crypto';
import { InvalidArgumentError, type Command } from 'commander';
import type { Config } from '../../config/index.ts';
import { isCountryCode } from '../../mapping/countries.ts';
import type { MatchOutcome } from '../../pipeline/outputs.ts';
import { RerunError } from '../../rerun/errors.ts';
import { inRunOrder } from '../../rerun/job-order.ts';
import { RERUN_LIMITS, type RerunFilter, type RerunJob } from '../../rerun/rerun-job.ts';
import { reportFailure } from '../failure.ts';
import { isoTime, listOf, nonEmpty, share, tagCollector, wholeNumber } from '../option-parsers.ts';
import { commandConfig } from '../options.ts';
import { withRerunContext, type RerunContext } from '../rerun-context.ts';
import { followRerun, RERUN_EXIT_CODES, reportFollowed } from '../rerun-follow.ts';

interface StartFlags {
  topic?: string;
  country?: string[];
  sourceSystem?: string[];
  outcome?: MatchOutcome[];
  notLookedUpSince?: number;
  startAfter?: string;
  limit?: number;
  batchSize?: number;
  tag?: string[];
  initialize?: boolean;
  dryRun?: boolean;
  quotaShare?: number;
  startAt?: number;
  id?: string;
  ifIdle?: boolean;
  wait?: boolean;
  timeout?: number;
  json?: boolean;
}

const OUTCOMES: readonly MatchOutcome[] = ['MATCH', 'MAYBE_MATCH', 'NO_MATCH', 'FAILED'];

const country = (value: string): string => {
  const code = value.trim().toUpperCase();
  if (!isCountryCode(code))
    throw new InvalidArgumentError(`${value} is not an ISO 3166-1 alpha-2 country code.`);
  return code;
};

const outcome = (value: string): string => {
  const name = value.trim().toUpperCase();
  if (!(OUTCOMES as readonly string[]).includes(name))
    throw new InvalidArgumentError(`${value} is not an outcome; one of ${OUTCOMES.join(', ')}.`);
  return name;
};

/** Ids become state topic keys (`rerun/<id>/<partition>`): no slash, nothing to quote. */
const jobId = (value: string): string => {
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(value))
    throw new InvalidArgumentError('must be 1-100 characters of a-z, A-Z, 0-9, ".", "_", "-".');
  return value;
};

const topicName = (value: string): string => {
  if (!/^[a-zA-Z0-9._-]{1,249}$/.test(value))
    throw new InvalidArgumentError(
      'must be a Kafka topic name (1-249 characters of a-z, A-Z, 0-9, ".", "_", "-").',
    );
  return value;
};

/** `rerun-<UTC time>-<6 hex>`: sorts by time, unique without asking anyone. */
export const defaultJobId = (now: number): string =>
  `rerun-${new Date(now).toISOString().replace(/[-:]|\.\d+/g, '')}-${randomBytes(3).toString('hex')}`;

export function rerunJob(flags: StartFlags, config: Config, now: number): RerunJob {
  const filter: RerunFilter = {
    ...(flags.country === undefined ? {} : { countries: flags.country }),
    ...(flags.sourceSystem === undefined ? {} : { sourceSystems: flags.sourceSystem }),
    ...(flags.outcome === undefined ? {} : { outcomes: flags.outcome }),
    ...(flags.notLookedUpSince === undefined ? {} : { notLookedUpSince: flags.notLookedUpSince }),
  };
  return {
    id: flags.id ?? defaultJobId(now),
    inputTopic: flags.topic ?? config.topics.input,
    filter,
    ...(flags.startAfter === undefined ? {} : { startAfter: flags.startAfter }),
    ...(flags.limit === undefined ? {} : { limit: flags.limit }),
    batchSize: flags.batchSize ?? config.rerun.batchSize,
    tags: flags.tag ?? [],
    initialize: flags.initialize ?? false,
    dryRun: flags.dryRun ?? false,
    quotaShare: flags.quotaShare ?? config.rerun.quotaShare,
    ...(flags.startAt === undefined ? {} : { startAt: flags.startAt }),
    control: 'run',
    createdAt: now,
    controlAt: now,
  };
}

/** Refuses what would make the job wrong or unseen: an id taken, an unknown topic, a busy scope under --if-idle. */
async function checkStart(context: RerunContext, job: RerunJob, ifIdle: boolean): Promise<void> {
  if (context.store.job(job.id) !== undefined)
    throw new RerunError('RERUN_ALREADY_EXISTS', `rerun ${job.id} exists already; choose another --id`, {
      details: { jobId: job.id },
    });
  if ((await context.partitions(job.inputTopic)) === undefined)
    throw new RerunError('RERUN_UNKNOWN_TOPIC', `input topic ${job.inputTopic} does not exist`, {
      details: { topic: job.inputTopic },
    });
  if (!ifIdle) return;
  for (const other of inRunOrder(context.store).filter((j) => j.inputTopic === job.inputTopic)) {
    const view = await context.view(other);
    if (!view.ended)
      throw new RerunError(
        'RERUN_SCOPE_BUSY',
        `rerun ${other.id} of input topic ${job.inputTopic} is ${view.status}; nothing was started (--if-idle)`,
        { details: { inputTopic: job.inputTopic, activeJobId: other.id } },
      );
  }
}

export function registerRerunStart(rerun: Command): void {
  const { batchSize, maxTags } = RERUN_LIMITS;
  rerun
    .command('start')
    .description(
      'write a rerun job to the state topic: the `run` replicas owning the input topic look the stored partners ' +
        'it chooses up again, beside live traffic and under a share of the quota. Prints the job id; with --wait ' +
        `follows it and exits 0 when FINISHED, ${RERUN_EXIT_CODES.notFinished} when DIED or CANCELED, ` +
        `${RERUN_EXIT_CODES.stillRunning} when still running after --timeout; with --if-idle exits ` +
        `${RERUN_EXIT_CODES.scopeBusy}, writing nothing, while a job of the same input topic has not ended`,
    )
    .option(
      '--topic <topic>',
      'the input topic whose stored partners are looked up again (default topics.input)',
      topicName,
    )
    .option(
      '--country <cc...>',
      'only partners with an address in one of these countries (ISO 3166-1 alpha-2)',
      listOf(country),
    )
    .option('--source-system <system...>', 'only partners of these source systems', listOf(nonEmpty))
    .option(
      '--outcome <outcome...>',
      `only partners whose last outcome is one of ${OUTCOMES.join(', ')}`,
      listOf(outcome),
    )
    .option(
      '--not-looked-up-since <date>',
      'only partners last looked up before this ISO 8601 date or time',
      isoTime('--not-looked-up-since'),
    )
    .option(
      '--start-after <partnerId>',
      'only partner ids after this one (in id order, per partition)',
      nonEmpty,
    )
    .option('--limit <n>', 'at most this many partners per input partition', wholeNumber('--limit', 1))
    .option(
      '--batch-size <n>',
      `partners per chunk, ${batchSize.min}..${batchSize.max}: the unit of progress and of resuming (default rerun.batchSize)`,
      wholeNumber('--batch-size', batchSize.min, batchSize.max),
    )
    .option('--tag <tag...>', `labels of the job; at most ${maxTags} unique tags`, tagCollector(maxTags))
    .option(
      '--initialize',
      'a BusinessPartnerCreated event per partner regardless of history (for a new downstream)',
    )
    .option(
      '--dry-run',
      'lookups and the change report only: no output is written, the storage is not touched',
    )
    .option(
      '--quota-share <share>',
      'the most of each quota window the rerun may take, more than 0 and at most 1 (default rerun.quotaShare)',
      share('--quota-share'),
    )
    .option(
      '--start-at <time>',
      'not before this ISO 8601 time (SCHEDULED until then)',
      isoTime('--start-at'),
    )
    .option('--id <id>', 'the job id (default rerun-<UTC time>-<6 hex>)', jobId)
    .option('--if-idle', 'start nothing while a job of the same input topic has not ended (for a CronJob)')
    .option('--wait', 'follow the job until it ends, then print it with its change report')
    .option(
      '--timeout <seconds>',
      'with --wait: stop following after this long (the job goes on; default rerun.waitTimeoutMs, 0: none)',
      wholeNumber('--timeout', 0),
    )
    .option('--json', 'print the job (with --wait, where it ended) as JSON')
    .action(async (flags: StartFlags, command: Command) => {
      // Taken for a follow's bound, it was ignored without --wait: the command returned at once.
      if (flags.timeout !== undefined && !flags.wait)
        command.error('error: --timeout applies only with --wait');
      const config = commandConfig(command, {}, true);
      const job = rerunJob(flags, config, Date.now());
      await withRerunContext(config, async (context) => {
        try {
          // Decided and written as one step against every other start of the topic's jobs:
          // of two --if-idle starts at the same moment, one writes its job.
          await context.store.createJob(job, () => checkStart(context, job, flags.ifIdle ?? false));
        } catch (error) {
          if (!(error instanceof RerunError) || error.code !== 'RERUN_SCOPE_BUSY') throw error;
          reportFailure(error);
          process.exitCode = RERUN_EXIT_CODES.scopeBusy;
          return;
        }
        const view = await context.view(job);
        console.error(
          `started rerun ${job.id} of input topic ${job.inputTopic}: ${view.status}` +
            (view.message === undefined ? '' : ` (${view.message})`),
        );
        if (!flags.wait) {
          console.log(flags.json ? JSON.stringify(view, null, 2) : job.id);
          return;
        }
        const timeoutMs = flags.timeout === undefined ? config.rerun.waitTimeoutMs : flags.timeout * 1_000;
        reportFollowed(await followRerun(context, job.id, timeoutMs), flags.json ?? false);
      });
    });
}
