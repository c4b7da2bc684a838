// Chaos runs keep their processes' data and logs in a folder of their own under the system's
// temporary folder, never in the shared .cache/run (whose reaper would see other engineers'
// infrastructure): a later run removes what a crashed one left behind. One folder per run (the
// global setup's, printed at start) holds the registry's files and a folder per scenario, so
// that with CHAOS_KEEP_LOGS=true that one path keeps every log of the run, and later runs
// leave it alone.
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createRunDir,
  keepRunDir,
  reapStaleRuns,
  stopProcess,
  type RunDir,
} from '../../../deploy/local/processes.ts';

const PROJECT = fileURLToPath(new URL('../../../', import.meta.url));
/** Absolute paths: processes run with the run folder as their working directory. */
export const NODE = join(PROJECT, 'node_modules', '.bin', 'node');
export const CLI = join(PROJECT, 'src', 'cli', 'main.ts');

const CHAOS_RUNS = join(tmpdir(), 'partner-enrich-chaos');

export const keepsLogs = (env: NodeJS.ProcessEnv = process.env): boolean => env.CHAOS_KEEP_LOGS === 'true';

/**
 * The run's folder, made by the global setup (once per run: scenario workers come and go), after
 * removing the folders of earlier runs whose owner died; kept ones only have their processes stopped.
 */
export async function openChaosRun(root = CHAOS_RUNS, keep = keepsLogs()): Promise<RunDir> {
  await reapStaleRuns(root);
  const run = await createRunDir(root);
  if (keep) await keepRunDir(run);
  return run;
}

/** A scenario's folder, inside the run's. */
export const scenarioRunDir = (runPath: string): Promise<RunDir> => createRunDir(runPath);

/** Stops the processes started in the folder (SIGKILL after `graceMs`) and removes it, unless its logs are kept. */
export async function closeRunDir(run: RunDir, { graceMs = 5_000, keep = keepsLogs() } = {}): Promise<void> {
  await Promise.all(run.pids.map((pid) => stopProcess(pid, graceMs)));
  if (!keep) await rm(run.path, { recursive: true, force: true });
}
