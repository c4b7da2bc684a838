// The chaos harness's folders (test/chaos/support/run-dir.ts) as a chaos run uses them: the
// global setup opens the run's folder in vitest's main process and prints it, each scenario
// makes its own inside it, and the next run reaps what ended. Each run here is a process of its
// own, as vitest's is, so that the next run finds its owner gone.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAlive } from '../../deploy/local/processes.ts';
import { NODE, openChaosRun } from '../chaos/support/run-dir.ts';

const RUN_DIR = fileURLToPath(new URL('../chaos/support/run-dir.ts', import.meta.url));
const PROCESSES = fileURLToPath(new URL('../../deploy/local/processes.ts', import.meta.url));

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'chaos-runs-'));
});
afterEach(() => rm(root, { recursive: true, force: true }));

interface EndedRun {
  /** The run's folder as the global setup prints it. */
  printed: string;
  /** The scenario's replica log. */
  log: string;
  /** The replica's process, a `sleep` in its own process group. */
  replicaPid: number;
}

/**
 * A chaos run with one scenario whose replica writes a log, in a process of its own that ends
 * with the run's clean-up (as the suite's teardown does) or, with `crash`, without it.
 */
async function endedRun(env: NodeJS.ProcessEnv, crash = false): Promise<EndedRun> {
  const script = `
    import { writeFile } from 'node:fs/promises';
    import { join } from 'node:path';
    import { closeRunDir, openChaosRun, scenarioRunDir } from ${JSON.stringify(RUN_DIR)};
    import { startService } from ${JSON.stringify(PROCESSES)};
    const run = await openChaosRun(${JSON.stringify(root)});
    const scenario = await scenarioRunDir(run.path);
    const replica = await startService(scenario, 'replica-1', 'sleep', ['300']);
    await writeFile(replica.logFile, 'replica 1 started\\n');
    console.log(JSON.stringify({ printed: run.path, log: replica.logFile, replicaPid: replica.pid }));
    if (!${crash}) {
      await closeRunDir(scenario);
      await closeRunDir(run);
    }
  `;
  const { stdout } = await promisify(execFile)(NODE, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH, ...env },
  });
  return JSON.parse(stdout) as EndedRun;
}

describe('the chaos run folders', () => {
  it('regression: with CHAOS_KEEP_LOGS=true the logs were not under the folder printed at start, and the next run deleted them', async () => {
    const run = await endedRun({ CHAOS_KEEP_LOGS: 'true' });
    expect(run.log.startsWith(`${run.printed}/`)).toBe(true);
    expect(isAlive(run.replicaPid)).toBe(false);

    await openChaosRun(root, false);
    expect(await readFile(run.log, 'utf8')).toBe('replica 1 started\n');
  });

  it('without CHAOS_KEEP_LOGS, removes the run folder at the end of the run', async () => {
    const run = await endedRun({});
    expect(existsSync(run.printed)).toBe(false);
    expect(isAlive(run.replicaPid)).toBe(false);
  });

  it.each([
    ['removes', {}],
    ['keeps, with CHAOS_KEEP_LOGS=true,', { CHAOS_KEEP_LOGS: 'true' }],
  ])(
    "stops the processes of a scenario of a run that crashed at the next run's start, and %s its folder",
    async (_what, env: NodeJS.ProcessEnv) => {
      const run = await endedRun(env, true);
      try {
        expect(isAlive(run.replicaPid)).toBe(true);
        await openChaosRun(root, false);
        expect(isAlive(run.replicaPid)).toBe(false);
        expect(existsSync(run.log)).toBe(env.CHAOS_KEEP_LOGS === 'true');
      } finally {
        if (isAlive(run.replicaPid)) process.kill(-run.replicaPid, 'SIGKILL');
      }
    },
  );
});
