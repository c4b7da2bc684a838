// The local services' lifecycle (deploy/local): what a start leaves running, and what a later
// start or a signal stops. Real processes (`sleep` standing in for the JVMs), real signals.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isAlive, reapStaleRuns, startService } from '../../deploy/local/processes.ts';

/** A pid no process can have (above Linux's pid_max): the owner of a run that died. */
const DEAD_OWNER = 999_999_999;
const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0))
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
});

/** `sleep` in a process group of its own, working in `cwd`, as the services are started. */
async function sleeper(cwd: string): Promise<number> {
  const child = spawn('sleep', ['300'], { cwd, detached: true, stdio: 'ignore' });
  child.unref();
  await once(child, 'spawn');
  started.push(child.pid as number);
  return child.pid as number;
}

describe('reapStaleRuns', () => {
  it('stops the services a dead run recorded and removes its folder', async () => {
    const runsRoot = await mkdtemp(join(tmpdir(), 'runs-'));
    const run = { path: join(runsRoot, `${DEAD_OWNER}-1`), pids: [] };
    await mkdir(run.path);
    const { pid } = await startService(run, 'sleeper', 'sleep', ['300']);
    started.push(pid);
    await reapStaleRuns(runsRoot);
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 10_000 });
    expect(existsSync(run.path)).toBe(false);
  });

  it('regression: a pid a dead run recorded was killed whatever held it now (a reboot, the pids wrapped round); now only a process working in that run folder', async () => {
    const runsRoot = await mkdtemp(join(tmpdir(), 'runs-'));
    const folder = join(runsRoot, `${DEAD_OWNER}-1`);
    await mkdir(folder);
    const unrelated = await sleeper(tmpdir());
    await writeFile(join(folder, 'pids.json'), JSON.stringify([unrelated]));
    await reapStaleRuns(runsRoot);
    expect(isAlive(unrelated)).toBe(true);
  });
});

describe('npm run infra', () => {
  it('regression: a signal while the services were starting stopped node alone, the services ran on; now they are stopped', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'run-'));
    // infra.ts's signal handling around a start that has begun one service and waits.
    const script = `
      import { startService } from ${JSON.stringify(new URL('../../deploy/local/processes.ts', import.meta.url).pathname)};
      import { stopOnSignal } from ${JSON.stringify(new URL('../../deploy/local/infra.ts', import.meta.url).pathname)};
      stopOnSignal();
      const { pid } = await startService({ path: ${JSON.stringify(dir)}, pids: [] }, 'sleeper', 'sleep', ['300']);
      console.log(pid);
      setInterval(() => {}, 1 << 30);
    `;
    const node = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(node.stdout, 'data')) as [Buffer];
    const service = Number(line.toString().trim());
    started.push(service);
    expect(isAlive(service)).toBe(true);
    node.kill('SIGINT');
    await once(node, 'exit');
    await vi.waitFor(() => expect(isAlive(service)).toBe(false), { timeout: 20_000 });
  });

  it('regression: --help started the infrastructure; now it prints the usage and exits 0', () => {
    const infra = spawnSync(process.execPath, ['deploy/local/infra.ts', '--help'], {
      encoding: 'utf8',
      timeout: 10_000,
      // Taken as given: a start would print their addresses and run until stopped.
      env: { ...process.env, KAFKA_BROKERS: '127.0.0.1:1', SCHEMA_REGISTRY_URL: 'http://127.0.0.1:2' },
    });
    expect(infra.status).toBe(0);
    expect(infra.stdout).toMatch(/^usage: npm run infra/);
  });
});
