// Parent side of bench/support/worker.ts: forks a child for one job and resolves with what it
// measured. With BENCH_CPU_PROF set, the child writes a V8 CPU profile to out/profiles;
// BENCH_NODE_FLAGS (space-separated) are added after a pipeline child's runtime flags, so that
// a V8 setting can be tried (or traced, `--trace-gc`) without editing the sources.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { RUNTIME_ENV, RUNTIME_NODE_FLAGS } from '../../src/cli/runtime-flags.ts';
import { track } from './children.ts';
import type { WorkerCommand, WorkerJob, WorkerMessage, WorkerResult } from './jobs.ts';

const workerPath = fileURLToPath(new URL('./worker.ts', import.meta.url));
/** out/ is git-ignored: profiles are large and machine-specific. */
export const profilesDir = fileURLToPath(new URL('../../out/profiles/', import.meta.url));

export interface RunningWorker {
  /** Resolves once the child consumes (its group joined). */
  ready: Promise<void>;
  result: Promise<WorkerResult>;
  /** Sends the child a command after its job (an open-pipeline's record count). */
  command(message: WorkerCommand): void;
}

export interface WorkerOptions {
  cpuProfile?: string;
  /** Extra node flags of the child, e.g. a heap limit. */
  nodeFlags?: string[];
}

export function startWorker(job: WorkerJob, options: WorkerOptions = {}): RunningWorker {
  const profile = options.cpuProfile ?? process.env.BENCH_CPU_PROF;
  const pipeline = job.kind === 'pipeline' || job.kind === 'open-pipeline';
  const extraFlags = process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
  const execArgv = [
    // partner-enrich runs with its memory flags; the baselines with Node's defaults.
    ...(pipeline ? [...RUNTIME_NODE_FLAGS, ...extraFlags] : []),
    ...(options.nodeFlags ?? []),
    ...(profile
      ? [
          '--cpu-prof',
          `--cpu-prof-dir=${profilesDir}`,
          `--cpu-prof-name=${job.kind}-${profile}-${Date.now()}.cpuprofile`,
        ]
      : []),
  ];
  const child = track(
    fork(workerPath, [], {
      execArgv,
      env: { ...process.env, ...(pipeline ? RUNTIME_ENV : {}) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  let markReady = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const result = new Promise<WorkerResult>((resolve, reject) => {
    child.on('message', (message: WorkerMessage) => {
      if (message.type === 'ready') markReady();
      else if (message.type === 'done') resolve(message.result);
      else reject(new Error(`${job.kind} worker failed: ${message.message}`));
    });
    child.once('exit', (code) => reject(new Error(`${job.kind} worker exited with code ${code}`)));
    child.once('error', reject);
  });
  child.send(job);
  return { ready, result, command: (message) => void child.send(message) };
}

export const runWorker = (job: WorkerJob, options: WorkerOptions = {}): Promise<WorkerResult> =>
  startWorker(job, options).result;
