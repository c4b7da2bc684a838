import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockStateDir, reapStateDirs } from '../../src/state/state-dir-lock.ts';

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
