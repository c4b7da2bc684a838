// `storage initialize`: the reference service's own event store initializer job (data exchange
// API, spec items 20-21) for a platform-side storage, started and followed from the command
// line, or one started before followed again by its id (--job). The service walks the storage
// itself and stores a BusinessPartnerCreated event per partner; nothing passes through the
// pipeline, Kafka or the lookup quota.
import cliProgress from 'cli-progress';
import { Option, type Command } from 'commander';
import { ConfigError, envVarFor, type Config } from '../../config/index.ts';
import { describeProblems } from '../../config/problems.ts';
import {
  POLL_DEFAULTS,
  RefDataHttpError,
  RefDataJobError,
  waitForEventStoreInitializerJob,
  type JobProgress,
  type RefDataClient,
  type Schemas,
} from '../../refdata/index.ts';
import { createRefDataClient } from '../enrichment.ts';
import { reportFailure } from '../failure.ts';
import { nonEmpty, tagCollector, wholeNumber } from '../option-parsers.ts';
import { commandConfig } from '../options.ts';

type InitializerJob = Schemas['EventStoreInitializerJob'];
type InitializerRequest = Schemas['EventStoreInitializerJobCreateRequest'];

/**
 * Beyond the CLI's 0 (done), 1 (bad usage, unexpected failure) and 2 (an error with a code,
 * e.g. configuration or HTTP): scripts must tell a job that failed from one still running.
 */
export const STORAGE_INITIALIZE_EXIT_CODES = {
  /** The job ended otherwise than FINISHED: DIED, COULDNT_START or ARCHIVED. */
  jobNotFinished: 3,
  /** The job was still not final after --timeout; it keeps running on the service. */
  stillRunning: 4,
} as const;

/** The service's limits (spec item 20), checked before anything is sent. */
export const INITIALIZER_LIMITS = { batchSize: { min: 1, max: 500 }, maxTags: 10 } as const;

/** How long the job is followed unless --timeout says otherwise: the polling helper's own budget. */
const DEFAULT_TIMEOUT_SECONDS = 30 * 60;

interface InitializeFlags {
  storage?: string;
  job?: string;
  dataSource?: string;
  startAfter?: string;
  batchSize?: number;
  limit?: number;
  tag?: string[];
  initialize?: boolean;
  dryRun?: boolean;
  wait: boolean;
  json?: boolean;
  timeout: number;
}

const collectTag = tagCollector(INITIALIZER_LIMITS.maxTags);

/** The options that describe a new job: with --job, the job already has its own. */
const NEW_JOB_OPTIONS = [
  'storage',
  'dataSource',
  'startAfter',
  'batchSize',
  'limit',
  'tag',
  'initialize',
  'dryRun',
] as const satisfies readonly (keyof InitializeFlags)[];

/** What a user runs to follow the job again: printed wherever the command leaves a job behind. */
const followAgain = (jobId: string): string => `partner-enrich storage initialize --job ${jobId}`;

/** The flags of a new job: --storage is required unless --job names one started before. */
type NewJobFlags = InitializeFlags & { storage: string };

/** The create request the flags ask for; options left out take the service's defaults. */
export function initializerRequest(flags: Omit<NewJobFlags, 'wait' | 'timeout'>): InitializerRequest {
  const featuresOn = [
    ...(flags.initialize ? (['INITIALIZE'] as const) : []),
    ...(flags.dryRun ? (['NO_PERSISTENCE'] as const) : []),
  ];
  return {
    storageId: flags.storage,
    ...(flags.dataSource === undefined ? {} : { dataSourceId: flags.dataSource }),
    ...(flags.startAfter === undefined ? {} : { startAfter: flags.startAfter }),
    ...(flags.batchSize === undefined ? {} : { batchSize: flags.batchSize }),
    ...(flags.limit === undefined ? {} : { limit: flags.limit }),
    ...(flags.tag === undefined ? {} : { tags: flags.tag }),
    ...(featuresOn.length === 0 ? {} : { featuresOn }),
  };
}

export function registerStorageInitialize(program: Command): void {
  const storage =
    program.commands.find((c) => c.name() === 'storage') ??
    program.command('storage').description('platform-side storages of the reference data service');
  const { batchSize, maxTags } = INITIALIZER_LIMITS;
  storage
    .command('initialize')
    .description(
      "start the reference data service's event store initializer job for a platform-side storage (a " +
        'BusinessPartnerCreated event per partner of the storage), or with --job take one started before, ' +
        'and follow it to its end; exits 0 when it ' +
        `FINISHED, ${STORAGE_INITIALIZE_EXIT_CODES.jobNotFinished} when it DIED, COULDNT_START or was ARCHIVED, ` +
        `${STORAGE_INITIALIZE_EXIT_CODES.stillRunning} when it is still running after --timeout, ` +
        '2 on a configuration or service error, among them REFDATA_JOB_UNREACHABLE: the job could not be read ' +
        `in ${POLL_DEFAULTS.maxMissedPolls} polls in a row or until --timeout (network errors, 5xx and 429s are ` +
        'ridden out until then; the job may still be running), 1 on a refused option. ' +
        'Needs refdata.dataExchangePassword (the data exchange API authenticates as refdata.credentialUsername)',
    )
    .option('--storage <id>', 'the storage to initialize (required unless --job)', nonEmpty)
    .addOption(
      new Option(
        '--job <jobId>',
        'follow the job with this id, started before (with --no-wait, or left running at REFDATA_JOB_UNREACHABLE ' +
          'or exit 4), instead of starting one; not with the options of a new job (--storage, --data-source, ' +
          '--start-after, --batch-size, --limit, --tag, --initialize, --dry-run)',
      )
        .argParser(nonEmpty)
        .conflicts([...NEW_JOB_OPTIONS]),
    )
    .option('--data-source <id>', 'only the partners of this data source', nonEmpty)
    .option('--start-after <partnerId>', 'start after this business partner id', nonEmpty)
    .option(
      '--batch-size <n>',
      `partners per batch, ${batchSize.min}..${batchSize.max} (service default ${batchSize.max})`,
      wholeNumber('--batch-size', batchSize.min, batchSize.max),
    )
    .option('--limit <n>', 'at most this many partners', wholeNumber('--limit', 1))
    .option('--tag <tag>', `a tag of the job; repeatable, at most ${maxTags} unique tags`, collectTag)
    .option(
      '--initialize',
      'INITIALIZE: only Created events, without checking existing ones (only for a storage that never had UPDATES)',
    )
    .option('--dry-run', 'NO_PERSISTENCE: run the job without persisting any event')
    .option(
      '--no-wait',
      'print the job id (with --json, the created job) and exit without following it; with --job, print ' +
        'the job once as read (exit 0 whatever its status)',
    )
    .option('--json', 'print the final job as JSON instead of a table')
    .option(
      '--timeout <seconds>',
      'stop following after this long (the job keeps running on the service)',
      wholeNumber('--timeout', 1),
      DEFAULT_TIMEOUT_SECONDS,
    )
    .action(async (flags: InitializeFlags, command: Command) => {
      if (flags.job !== undefined) {
        await followStarted(dataExchangeClient(command), flags.job, flags);
        return;
      }
      const storage =
        flags.storage ??
        command.error(
          "error: required option '--storage <id>' not specified (or --job <jobId>: follow a job started before)",
        );
      await startAndFollow(dataExchangeClient(command), { ...flags, storage });
    });
}

function dataExchangeClient(command: Command): RefDataClient {
  // The data exchange API authenticates with its own credential: the lookup API's API key or
  // OAuth client was required, and never sent.
  const config = commandConfig(command, {}, true);
  requireDataExchangeCredential(config);
  return createRefDataClient(config.refdata, config.retry);
}

async function startAndFollow(client: RefDataClient, flags: NewJobFlags): Promise<void> {
  const created = await client.createEventStoreInitializerJob({ body: initializerRequest(flags) });
  const jobId = created.id;
  if (jobId === undefined) {
    throw new RefDataHttpError(
      'REFDATA_INVALID_RESPONSE',
      {
        operation: 'createEventStoreInitializerJob',
        status: 200,
        serviceMessage: 'the created job has no id, so it cannot be followed',
      },
      false,
    );
  }
  if (!flags.wait) {
    console.log(flags.json ? JSON.stringify(created, null, 2) : jobId);
    // On stderr: stdout stays the id alone, for scripts.
    console.error(`partner-enrich: follow it with: ${followAgain(jobId)}`);
    return;
  }
  console.error(`started event store initializer job ${jobId} for storage ${flags.storage}`);
  await followToItsEnd(client, jobId, flags);
}

/** --job: the job as it stands now (--no-wait), or followed as a started job is. */
async function followStarted(client: RefDataClient, jobId: string, flags: InitializeFlags): Promise<void> {
  try {
    if (!flags.wait) {
      printJob(await client.getEventStoreInitializerJob({ path: { jobId } }), flags);
      return;
    }
    console.error(`following event store initializer job ${jobId}`);
    await followToItsEnd(client, jobId, flags);
  } catch (error) {
    if (!(error instanceof RefDataHttpError && error.code === 'REFDATA_NOT_FOUND')) throw error;
    process.exitCode = reportFailure(error);
    // The service's 404 body need not name the job; the id may be mistyped or of another service.
    console.error(`partner-enrich: the service knows no event store initializer job ${jobId}`);
  }
}

const printJob = (job: InitializerJob, flags: Pick<InitializeFlags, 'json'>): void =>
  console.log(flags.json ? JSON.stringify(job, null, 2) : describeJob(job));

/** Follows the job, prints it as last read and sets the exit code of how following ended. */
async function followToItsEnd(
  client: RefDataClient,
  jobId: string,
  flags: Pick<InitializeFlags, 'json' | 'timeout'>,
): Promise<void> {
  const { job, failure } = await follow(client, jobId, flags.timeout);
  printJob(job, flags);
  if (failure === undefined) return;
  const errorExitCode = reportFailure(failure);
  if (failure.code === 'REFDATA_JOB_TIMEOUT') {
    console.error(
      `partner-enrich: job ${jobId} keeps running on the service; follow it again with: ${followAgain(jobId)}`,
    );
    process.exitCode = STORAGE_INITIALIZE_EXIT_CODES.stillRunning;
  } else if (failure.code === 'REFDATA_JOB_UNREACHABLE') {
    // Where the job stands is not known, so neither 3 nor 4: a service error, as before the follow rode out any.
    console.error(
      `partner-enrich: job ${jobId} may still be running on the service; once it answers, follow it again ` +
        `with: ${followAgain(jobId)}`,
    );
    process.exitCode = errorExitCode;
  } else {
    process.exitCode = STORAGE_INITIALIZE_EXIT_CODES.jobNotFinished;
  }
}

/** Checked before any request: the client would only fail at the first call, naming a root instead of the option. */
function requireDataExchangeCredential(config: Config): void {
  if (config.refdata.dataExchangePassword !== undefined) return;
  const path = 'refdata.dataExchangePassword';
  const problems = [
    {
      path,
      message:
        `required by storage initialize: the data exchange API authenticates as refdata.credentialUsername ` +
        `(${config.refdata.credentialUsername}) with this password; set it in the file or as ${envVarFor(path)}`,
    },
  ];
  throw new ConfigError(
    'CONFIG_INVALID',
    `Invalid configuration (1 problem):\n${describeProblems(problems)}`,
    {
      details: { problems },
    },
  );
}

interface Followed {
  /** The job as last read: final, or where it stood when following stopped. */
  job: InitializerJob;
  failure?: RefDataJobError;
}

async function follow(client: RefDataClient, jobId: string, timeoutSeconds: number): Promise<Followed> {
  let last: InitializerJob = { id: jobId };
  // The polling helper reports the status but throws away the job on a failure; the job's
  // message and counts are what the operator needs then, so each read is kept.
  const reader: Pick<RefDataClient, 'getEventStoreInitializerJob'> = {
    getEventStoreInitializerJob: async (...args) =>
      (last = await client.getEventStoreInitializerJob(...args)),
  };
  // Named by the job's storage as read: a job followed by its id comes without --storage.
  const view = progressView(process.stderr, () => last.storageId ?? `job ${jobId}`);
  try {
    const job = await waitForEventStoreInitializerJob(reader, jobId, {
      timeoutMs: timeoutSeconds * 1_000,
      onProgress: (progress) => view.update(progress),
    });
    // The helper counts ARCHIVED as an end; only FINISHED says this run created the events.
    if (job.status === 'FINISHED') return { job };
    const failure = new RefDataJobError('REFDATA_JOB_FAILED', {
      kind: 'eventStoreInitializerJob',
      jobId,
      status: job.status,
      ...(job.message === undefined ? {} : { statusMessage: job.message }),
    });
    return { job, failure };
  } catch (error) {
    if (error instanceof RefDataJobError) return { job: last, failure: error };
    throw error;
  } finally {
    view.stop();
  }
}

interface ProgressView {
  update(progress: JobProgress): void;
  stop(): void;
}

/** A bar redrawn in place on a terminal; otherwise a plain line per change, for logs. */
function progressView(stream: NodeJS.WriteStream, storageOf: () => string): ProgressView {
  let shown: string | undefined;
  const changed = ({ status, progress }: JobProgress): boolean => {
    const key = `${status}/${progress}`;
    if (key === shown) return false;
    shown = key;
    return true;
  };
  if (!stream.isTTY) {
    return {
      update: (progress) => {
        if (!changed(progress)) return;
        const { jobId, status, elapsedMs } = progress;
        stream.write(
          `event store initializer job ${jobId}: ${status ?? 'no status'}, ${progress.progress ?? 0} % ` +
            `after ${Math.round(elapsedMs / 1000)} s\n`,
        );
      },
      stop: () => {},
    };
  }
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: `initializing {storage} [{bar}] {percentage}% | {status} | {duration_formatted} | ETA {eta_formatted}`,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update: (progress) => {
      if (!changed(progress)) return;
      const payload = { status: progress.status ?? 'no status', storage: storageOf() };
      if (started) bar.update(progress.progress ?? 0, payload);
      else bar.start(100, progress.progress ?? 0, payload);
      started = true;
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}

/** The job as a two-column table: what it did (its message carries the service's counts) and with which options. */
export function describeJob(job: InitializerJob): string {
  const rows: [string, string | number | undefined][] = [
    ['job', job.id],
    ['status', job.status],
    ['progress', job.progress === undefined ? undefined : `${job.progress} %`],
    ['message', job.message],
    ['storage', job.storageId],
    ['data source', job.dataSourceId],
    ['start after', job.startAfter],
    ['batch size', job.batchSize],
    ['event store', job.eventStoreId],
    ['created', job.createdAt],
    ['modified', job.modifiedAt],
  ];
  const shown = rows.filter((row): row is [string, string | number] => row[1] !== undefined);
  const width = Math.max(...shown.map(([name]) => name.length));
  return shown.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n');
}
