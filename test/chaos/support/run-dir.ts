// Chaos runs keep their processes' data and logs in a folder of their own under the system's
// temporary folder, never in the shared .cache/run (whose reaper would see other engineers'
// infrastructure): a later run removes what a crashed one left behind.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRunDir, reapStaleRuns, type RunDir } from '../../../deploy/local/processes.ts';

const PROJECT = fileURLToPath(new URL('../../../', import.meta.url));
/** Absolute paths: processes run with the run folder as their working directory. */
export const NODE = join(PROJECT, 'node_modules', '.bin', 'node');
export const CLI = join(PROJECT, 'src', 'cli', 'main.ts');

const CHAOS_RUNS = join(tmpdir(), 'partner-enrich-chaos');

/** A new run folder; `reap` first removes folders whose owner died (only the global setup: scenario workers come and go). */
export async function chaosRunDir(reap = false): Promise<RunDir> {
  if (reap) await reapStaleRuns(CHAOS_RUNS);
  return createRunDir(CHAOS_RUNS);
}
