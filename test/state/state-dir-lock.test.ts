import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockStateDir, reapStateDirs } from '../../src/state/state-dir-lock.ts';

/** Another process holding `dir`'s lock until it is killed; resolves once it holds it. */
async function holderProcess(dir: string) {
  const lock = new URL('../../src/state/state-dir-lock.ts', import.meta.url).pathname;
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { lockStateDir } from '${lock}'; lockStateDir(process.argv[1]); console.log('held'); setInterval(() => {}, 1000);`,
      dir,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [first] = (await once(child.stdout, 'data')) as [Buffer];
  expect(first.toString()).toContain('held');
  return child;
}

/** The pid of a process that has exited. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '']).pid as number;

describe('the state directory lock', () => {
  it('refuses a second holder, in this process as in another live one (STATE_DIR_LOCKED)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-test-'));
    const unlock = lockStateDir(dir);
    expect(() => lockStateDir(dir)).toThrow(expect.objectContaining({ code: 'STATE_DIR_LOCKED' }));
    unlock();
    const other = mkdtempSync(join(tmpdir(), 'lock-test-'));
    writeFileSync(join(other, 'LOCK'), String(process.ppid));
    expect(() => lockStateDir(other)).toThrow(expect.objectContaining({ code: 'STATE_DIR_LOCKED' }));
    lockStateDir(dir)();
  });

  it('regression: a LOCK deleted from under its live holder let a second process take the directory (both would write its partition files)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-test-'));
    const holder = await holderProcess(dir);
    try {
      rmSync(join(dir, 'LOCK'));
      expect(() => lockStateDir(dir)).toThrow(
        expect.objectContaining({ code: 'STATE_DIR_LOCKED', details: { dir, pid: holder.pid } }),
      );
      // The refused process left no LOCK of its own behind.
      expect(existsSync(join(dir, 'LOCK'))).toBe(false);
    } finally {
      holder.kill('SIGKILL');
      await once(holder, 'exit');
    }
    // Its holder gone, the directory is free.
    lockStateDir(dir)();
  });

  it('takes over the lock of a process that died', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-test-'));
    writeFileSync(join(dir, 'LOCK'), String(deadPid()));
    const unlock = lockStateDir(dir);
    expect(() => lockStateDir(dir)).toThrow(expect.objectContaining({ code: 'STATE_DIR_LOCKED' }));
    unlock();
  });

  it('reaps private directories of dead processes, not those held', () => {
    const parent = mkdtempSync(join(tmpdir(), 'reap-test-'));
    const [dead, held, fresh] = [join(parent, 'p-dead'), join(parent, 'p-held'), join(parent, 'p-fresh')];
    for (const dir of [dead, held, fresh]) mkdirSync(dir);
    writeFileSync(join(dead, 'LOCK'), String(deadPid()));
    const unlock = lockStateDir(held);
    reapStateDirs(parent, 'p-');
    expect([existsSync(dead), existsSync(held), existsSync(fresh)]).toEqual([false, true, true]);
    unlock();
  });
});
