// Runs the `partner-enrich` command as a separate process, the way an operator does.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import type { Config } from '../../src/config/index.ts';
import { inPidNamespace } from './pid-namespace.ts';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const repository = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));

// Node's compile cache, shared by every command the tests start (as the image ships one:
// docs/CONTAINER.md): each start compiles the same sources, and on this project's 2-core
// machine that was about 0.7 s of CPU of each of the hundreds of starts of `npm test`.
// Under the run's temporary root (temp-root.ts), so that a run starts without one.
const compileCache = join(process.env.PARTNER_ENRICH_TEST_TMPDIR ?? tmpdir(), 'node-compile-cache');

/**
 * Starts the command, in the repository unless `cwd` says otherwise; the caller owns the
 * process. `pidNamespace`: as pid 1 of a pid namespace of its own, the child being `unshare`
 * (see inPidNamespace).
 */
export function startCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  { cwd, pidNamespace = false }: { cwd?: string; pidNamespace?: boolean } = {},
): ChildProcess {
  const command = [repository('node_modules/.bin/node'), repository('src/cli/main.ts'), ...args];
  const [file, ...rest] = pidNamespace ? inPidNamespace(command) : command;
  return spawn(file as string, rest, {
    env: {
      PATH: process.env.PATH,
      ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
      NODE_COMPILE_CACHE: compileCache,
      ...env,
    },
    ...(cwd === undefined ? {} : { cwd }),
  });
}

/** Runs the command to its end and returns what it printed. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<CliResult> {
  const child = startCli(args, env, { cwd });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/** The environment an operator sets for `run`: the test broker and registry, the given sandbox and topics. */
export function cliEnv(sandboxUrl: string, topics: Config['topics'], groupId: string): NodeJS.ProcessEnv {
  return {
    PARTNER_ENRICH_KAFKA__BROKERS: inject('kafkaBrokers'),
    PARTNER_ENRICH_KAFKA__GROUP_ID: groupId,
    PARTNER_ENRICH_SCHEMA_REGISTRY__URL: inject('schemaRegistryUrl'),
    PARTNER_ENRICH_TOPICS__INPUT: topics.input,
    PARTNER_ENRICH_TOPICS__MATCHES: topics.matches,
    PARTNER_ENRICH_TOPICS__EVENTS: topics.events,
    PARTNER_ENRICH_TOPICS__STORAGE: topics.storage,
    PARTNER_ENRICH_TOPICS__DEAD_LETTERS: topics.deadLetters,
    PARTNER_ENRICH_TOPICS__STATE: topics.state,
    PARTNER_ENRICH_TOPICS__PARTITIONS: '2',
    PARTNER_ENRICH_REFDATA__BASE_URL: sandboxUrl,
    PARTNER_ENRICH_REFDATA__API_KEY: 'sandbox-api-key',
    PARTNER_ENRICH_BATCHING__LINGER_MS: '50',
    PARTNER_ENRICH_POLLING__INITIAL_DELAY_MS: '20',
    PARTNER_ENRICH_OBSERVABILITY__METRICS_PORT: '0',
    PARTNER_ENRICH_SHUTDOWN__GRACE_MS: '10000',
  };
}
