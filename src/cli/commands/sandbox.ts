import { Option, type Command } from 'commander';
// Only the flags' defaults at registration: the sandbox (fastify, the dataset, the response
// validator) is imported when this command runs, so that `run` and the other commands never load it.
import {
  MAX_SANDBOX_ORGS,
  SANDBOX_DEFAULTS,
  SANDBOX_MODES,
  type SandboxMode,
} from '../../sandbox/defaults.ts';
import { share, wholeNumber } from '../option-parsers.ts';
import { MAX_TIMER_MS } from '../../timer-limit.ts';

interface SandboxFlags {
  port: number;
  host: string;
  apiKey: string;
  clientId: string;
  clientSecret: string;
  orgs: number;
  seed: number;
  mode: SandboxMode;
  latencyMs: number;
  latencyJitterMs: number;
  errorRate: number;
  throttleRate: number;
  resetRate: number;
  retryAfterSeconds: number;
  taskFailureRate: number;
  jobDeathRate: number;
  overLimit: boolean;
}

/** How long the requests being answered get once the sandbox is told to stop. */
const CLOSE_BOUND_MS = 2_000;

export function registerSandbox(program: Command): void {
  program
    .command('sandbox')
    .description(
      'serve the local reference data service (all five API roots on one address) with a generated dataset, ' +
        'fault injection (also at run time: PUT /admin/faults), counters (GET /admin/stats) and reference data ' +
        'revisions (POST /admin/dataset/revise); see docs/SANDBOX.md',
    )
    .option('--port <port>', 'port; 0 picks a free one', wholeNumber('--port', 0, 65_535), 8080)
    .option('--host <host>', 'interface to listen on', SANDBOX_DEFAULTS.host)
    .option('--api-key <key>', 'accepted X-API-KEY', SANDBOX_DEFAULTS.apiKey)
    .option('--client-id <id>', 'OAuth client id of the token endpoint', SANDBOX_DEFAULTS.clientId)
    .option(
      '--client-secret <secret>',
      'OAuth client secret of the token endpoint',
      SANDBOX_DEFAULTS.clientSecret,
    )
    .option(
      '--orgs <n>',
      'organizations in the generated dataset',
      wholeNumber('--orgs', 1, MAX_SANDBOX_ORGS),
      10_000,
    )
    .option('--seed <n>', 'seed of the dataset and of fault decisions', wholeNumber('--seed', 0), 1)
    .addOption(
      new Option('--mode <mode>', 'realistic: bulks run in the background; instant: finished at once')
        .choices(SANDBOX_MODES)
        .default('realistic'),
    )
    .option(
      '--latency-ms <ms>',
      'latency added to every request',
      wholeNumber('--latency-ms', 0, MAX_TIMER_MS),
      0,
    )
    .option(
      '--latency-jitter-ms <ms>',
      'up to this much more latency, drawn per request',
      wholeNumber('--latency-jitter-ms', 0, MAX_TIMER_MS),
      0,
    )
    .option(
      '--error-rate <share>',
      'share of requests answered 503',
      share('--error-rate', { zero: true }),
      0,
    )
    .option(
      '--throttle-rate <share>',
      'share of requests answered 429 with Retry-After',
      share('--throttle-rate', { zero: true }),
      0,
    )
    .option(
      '--reset-rate <share>',
      'share of requests whose connection is reset without an answer',
      share('--reset-rate', { zero: true }),
      0,
    )
    .option(
      '--retry-after-seconds <s>',
      'Retry-After of the injected 429s',
      wholeNumber('--retry-after-seconds', 0),
      1,
    )
    .option(
      '--task-failure-rate <share>',
      'share of bulk tasks that end FAILED',
      share('--task-failure-rate', { zero: true }),
      0,
    )
    .option(
      '--job-death-rate <share>',
      'share of jobs that die half-way',
      share('--job-death-rate', { zero: true }),
      0,
    )
    .option('--over-limit', 'every quota consume answers OVER_LIMIT', false)
    .action(async (flags: SandboxFlags) => {
      const { startSandbox } = await import('../../sandbox/index.ts');
      const sandbox = await startSandbox({
        port: flags.port,
        host: flags.host,
        apiKey: flags.apiKey,
        clientId: flags.clientId,
        clientSecret: flags.clientSecret,
        orgs: flags.orgs,
        seed: flags.seed,
        mode: flags.mode,
        faults: {
          latencyMs: flags.latencyMs,
          latencyJitterMs: flags.latencyJitterMs,
          errorRate: flags.errorRate,
          throttleRate: flags.throttleRate,
          resetRate: flags.resetRate,
          retryAfterSeconds: flags.retryAfterSeconds,
          taskFailureRate: flags.taskFailureRate,
          jobDeathRate: flags.jobDeathRate,
          overLimit: flags.overLimit,
        },
      });
      console.log(
        `sandbox listening on ${sandbox.url} (${flags.orgs} organizations, seed ${flags.seed}, ${flags.mode})`,
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      // Closing waits for the requests being answered: one held by a frozen sandbox, or a
      // connection a client keeps half-open, would keep a stopped sandbox up for good.
      setTimeout(() => {
        console.error(
          `partner-enrich: sandbox: requests still open ${CLOSE_BOUND_MS} ms after the stop: exiting`,
        );
        process.exit(0);
      }, CLOSE_BOUND_MS).unref();
      await sandbox.close();
    });
}
