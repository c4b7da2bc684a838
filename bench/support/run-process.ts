// `partner-enrich run` as an operator starts it: the real CLI in a child process, configured
// by PARTNER_ENRICH_ variables, watched through its /readyz and /metrics. With BENCH_CPU_PROF
// set, the child writes a V8 CPU profile to out/profiles.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../src/config/index.ts';
import { RUNTIME_ENV, RUNTIME_NODE_FLAGS } from '../../src/cli/runtime-flags.ts';
import { track } from './children.ts';
import { BENCH_REQUESTS_PER_SECOND, type BenchContext } from './context.ts';
import { profilesDir } from './spawn.ts';

const cliPath = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const READY_POLL_MS = 50;

export interface RunProcess {
  label: string;
  pid: number;
  /** Whether the process has exited (of itself or stopped). */
  exited(): boolean;
  /** Resolves with the ms from spawn to the first 200 of GET /readyz; rejects if it exits first. */
  ready(timeoutMs: number): Promise<number>;
  /** Whether /readyz answers 200 now. */
  isReady(): Promise<boolean>;
  /** The Prometheus text of /metrics. */
  metrics(): Promise<string>;
  /** The kernel's high-water mark of its resident set (VmHWM), in MB. */
  peakRssMb(): Promise<number>;
  /** SIGTERM, then waits for a clean exit; resolves with the ms it took. */
  stop(timeoutMs: number): Promise<number>;
  /** SIGKILL unless it has exited; for clean-up after a failure. */
  kill(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** Starts `partner-enrich run` with `env` over this process's environment. */
export async function startRunProcess(env: Record<string, string>, label: string): Promise<RunProcess> {
  const port = await freePort();
  const profile = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${profilesDir}`, `--cpu-prof-name=${label}-${Date.now()}.cpuprofile`]
    : [];
  const started = performance.now();
  const child = track(
    spawn(process.execPath, [...RUNTIME_NODE_FLAGS, ...profile, cliPath, 'run'], {
      env: {
        ...process.env,
        ...RUNTIME_ENV,
        ...env,
        PARTNER_ENRICH_OBSERVABILITY__METRICS_PORT: String(port),
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    }),
  );
  const exit = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  let exited = false;
  void exit.then(() => (exited = true));
  const base = `http://127.0.0.1:${port}`;
  const pid = child.pid as number;
  const isReady = () =>
    fetch(`${base}/readyz`).then(
      (response) => response.status === 200,
      () => false,
    );
  return {
    label,
    pid,
    exited: () => exited,
    isReady,
    async ready(timeoutMs) {
      for (;;) {
        if (exited) throw new Error(`partner-enrich (${label}) exited before it was ready`);
        if (await isReady()) return performance.now() - started;
        if (performance.now() - started > timeoutMs)
          throw new Error(`partner-enrich (${label}) not ready after ${timeoutMs / 1000} s`);
        await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
      }
    },
    metrics: async () => (await fetch(`${base}/metrics`)).text(),
    async peakRssMb() {
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      const match = /VmHWM:\s+(\d+) kB/.exec(status);
      if (!match?.[1]) throw new Error(`no VmHWM for process ${pid}`);
      return Number(match[1]) / 1024;
    },
    async stop(timeoutMs) {
      const stopping = performance.now();
      child.kill('SIGTERM');
      const timeout = AbortSignal.timeout(timeoutMs);
      const [code] = await Promise.race([
        exit,
        once(timeout, 'abort').then(() => {
          throw new Error(`partner-enrich (${label}) did not stop within ${timeoutMs / 1000} s`);
        }),
      ]);
      if (code !== 0) throw new Error(`partner-enrich (${label}) exited with code ${code}`);
      return performance.now() - stopping;
    },
    async kill() {
      if (exited) return;
      child.kill('SIGKILL');
      await exit;
    },
  };
}

/** Sum (or maximum) over the label sets of one metric in the Prometheus text format. */
export function metric(text: string, name: string, combine: 'sum' | 'max' = 'sum'): number {
  const values = text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)));
  if (values.length === 0) return 0;
  return combine === 'sum' ? values.reduce((a, b) => a + b, 0) : Math.max(...values);
}

/**
 * The variables that point `run` at the benchmark's broker, registry, sandbox and topics, as
 * `pipelineConfig` does for the in-process worker (the request rate limit raised likewise).
 */
export function runEnvironment(
  context: BenchContext,
  sandboxUrl: string,
  topics: Config['topics'],
  groupId: string,
): Record<string, string> {
  return {
    PARTNER_ENRICH_SOURCE: 'kafka',
    PARTNER_ENRICH_KAFKA__BROKERS: context.bootstrap,
    PARTNER_ENRICH_KAFKA__GROUP_ID: groupId,
    PARTNER_ENRICH_SCHEMA_REGISTRY__URL: context.registryUrl,
    PARTNER_ENRICH_TOPICS__INPUT: topics.input,
    PARTNER_ENRICH_TOPICS__MATCHES: topics.matches,
    PARTNER_ENRICH_TOPICS__EVENTS: topics.events,
    PARTNER_ENRICH_TOPICS__STORAGE: topics.storage,
    PARTNER_ENRICH_TOPICS__DEAD_LETTERS: topics.deadLetters,
    PARTNER_ENRICH_TOPICS__STATE: topics.state,
    PARTNER_ENRICH_TOPICS__PARTITIONS: String(topics.partitions),
    PARTNER_ENRICH_TOPICS__REPLICATION_FACTOR: String(topics.replicationFactor),
    PARTNER_ENRICH_REFDATA__BASE_URL: sandboxUrl,
    PARTNER_ENRICH_REFDATA__API_KEY: 'sandbox-api-key',
    PARTNER_ENRICH_RATE_LIMIT__REQUESTS_PER_SECOND: String(BENCH_REQUESTS_PER_SECOND),
    PARTNER_ENRICH_OBSERVABILITY__LOG_LEVEL: 'warn',
  };
}
