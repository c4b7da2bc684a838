import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockStateDir, reapStateDirs, removePrivateStateDir } from '../../src/state/state-dir-lock.ts';
import { commandPidHere, inPidNamespace } from '../support/pid-namespace.ts';

const lockModule = new URL('../../src/state/state-dir-lock.ts', import.meta.url).pathname;

/** The processes a test started, killed after it whatever its outcome. */
const started: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map(killHard));
});

/**
 * Another process taking `dir`'s lock, at pid 1 of a pid namespace of its own when `namespaced`
 * (a container's `run`). `said` is what came of it:
 * "held <its pid>", after which it holds the lock until killed, or the refusal's code and message.
 */
function lockingProcess(dir: string, { namespaced = false } = {}) {
  const node = [
    process.execPath,
    '--input-type=module',
    '-e',
    `import { lockStateDir } from '${lockModule}';
     try { lockStateDir(process.argv[1]); console.log('held', process.pid); setInterval(() => {}, 1000); }
     catch (error) { console.log(\`\${error.code}: \${error.message}\`); }`,
    dir,
  ];
  const [command, ...args] = namespaced ? inPidNamespace(node) : node;
  const child = spawn(command as string, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(child);
  const said = once(child.stdout, 'data').then(([line]) => String(line).trim());
  return { child, said };
}

/** Another process holding `dir`'s lock until it is killed; resolves once it holds it. */
async function holderProcess(dir: string) {
  const holder = lockingProcess(dir);
  expect(await holder.said).toBe(`held ${holder.child.pid}`);
  return holder.child;
}

async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGKILL');
  await once(child, 'exit');
}

/**
 * Kills a namespaced command itself (`unshare` passes no signal on) and waits for `unshare`,
 * which waits for it. Killed with `unshare`, the command dies a moment after `unshare`'s exit
 * is seen here, its lock still held (the restart beside it was refused in 37 of 40 tries).
 */
async function killNamespaced(unshare: ChildProcess): Promise<void> {
  process.kill(commandPidHere(unshare), 'SIGKILL');
  await once(unshare, 'exit');
}

/** The pid of a process that has exited. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '']).pid as number;

describe('the state directory lock', () => {
  it('refuses a second holder, in this process as in another live one (STATE_DIR_LOCKED, naming the holder)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-test-'));
    const unlock = lockStateDir(dir);
    expect(() => lockStateDir(dir)).toThrow(
      expect.objectContaining({ code: 'STATE_DIR_LOCKED', details: { dir, pid: process.pid } }),
    );
    unlock();
    const holder = await holderProcess(dir);
    expect(() => lockStateDir(dir)).toThrow(
      expect.objectContaining({ code: 'STATE_DIR_LOCKED', details: { dir, pid: holder.pid } }),
    );
  });

  it('regression: the lock files deleted from under their live holder let a second process take the directory (both would write its partition files)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-test-'));
    const holder = await holderProcess(dir);
    rmSync(join(dir, 'LOCK'));
    rmSync(join(dir, 'LOCK.db'));
    expect(() => lockStateDir(dir)).toThrow(
      expect.objectContaining({ code: 'STATE_DIR_LOCKED', details: { dir, pid: holder.pid } }),
    );
    // The refused process left no LOCK of its own behind.
    expect(existsSync(join(dir, 'LOCK'))).toBe(false);
    await killHard(holder);
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

  it('regression: reaps private directories no process holds (one whose LOCK named a live process holding nothing was kept for good), not those held here or in another pid namespace', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'reap-test-'));
    const [dead, reused, held, heldElsewhere, fresh] = ['dead', 'reused', 'held', 'elsewhere', 'fresh'].map(
      (name) => join(parent, `p-${name}`),
    ) as [string, string, string, string, string];
    for (const dir of [dead, reused, held, heldElsewhere, fresh]) mkdirSync(dir);
    writeFileSync(join(dead, 'LOCK'), String(deadPid()));
    // A live process that holds nothing: the pid of a killed one, taken again.
    writeFileSync(join(reused, 'LOCK'), String(process.ppid));
    const unlock = lockStateDir(held);
    const elsewhere = lockingProcess(heldElsewhere, { namespaced: true });
    expect(await elsewhere.said).toBe('held 1');
    reapStateDirs(parent, 'p-');
    expect([dead, reused, held, heldElsewhere, fresh].map((dir) => existsSync(dir))).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
    unlock();
  });

  it("removes a private directory at exit but for a folder still holding something, which the next start's reaper gets at once", () => {
    const parent = mkdtempSync(join(tmpdir(), 'reap-test-'));
    const [empty, holding] = ['empty', 'holding'].map((name) => join(parent, `p-${name}`)) as [
      string,
      string,
    ];
    for (const dir of [empty, holding]) {
      mkdirSync(join(dir, 'journal'), { recursive: true });
      const unlock = lockStateDir(dir);
      writeFileSync(join(dir, 'partners-0.sqlite'), 'state');
      unlock();
    }
    writeFileSync(join(holding, 'journal', 'write.json'), '{}');
    removePrivateStateDir(empty, 'journal');
    removePrivateStateDir(holding, 'journal');
    expect(existsSync(empty)).toBe(false);
    expect(readdirSync(holding).toSorted()).toEqual(['LOCK', 'journal']);

    const taken: string[] = [];
    reapStateDirs(parent, 'p-', {
      keep: 'journal',
      beforeRemove: (dir) => {
        taken.push(readdirSync(join(dir, 'journal')).join());
        rmSync(join(dir, 'journal', 'write.json'));
      },
    });
    expect(taken).toEqual(['write.json']);
    expect(existsSync(holding)).toBe(false);
  });

  it("regression: a start reaping a dead private directory removed what its folder kept for another process (the journal of another state topic's pipeline, whose restart then paid again); now kept, and taken by the next reaper", () => {
    const parent = mkdtempSync(join(tmpdir(), 'reap-test-'));
    const dead = join(parent, 'p-dead');
    mkdirSync(join(dead, 'journal'), { recursive: true });
    writeFileSync(join(dead, 'partners-0.sqlite'), 'state');
    writeFileSync(join(dead, 'journal', 'other-topic.json'), '{}');
    writeFileSync(join(dead, 'LOCK'), String(deadPid()));

    // A start for another topic takes nothing.
    reapStateDirs(parent, 'p-', { keep: 'journal' });
    expect(readdirSync(dead).toSorted()).toEqual(['LOCK', 'LOCK.db', 'journal']);
    expect(readdirSync(join(dead, 'journal'))).toEqual(['other-topic.json']);

    const taken: string[] = [];
    reapStateDirs(parent, 'p-', {
      keep: 'journal',
      beforeRemove: (dir) => {
        taken.push(...readdirSync(join(dir, 'journal')));
        rmSync(join(dir, 'journal', 'other-topic.json'));
      },
    });
    expect(taken).toEqual(['other-topic.json']);
    expect(existsSync(dead)).toBe(false);
  });

  it("regression: a second process in another pid namespace took a state directory in use (both pid 1, it read the holder's LOCK for its own: two containers on one volume); now STATE_DIR_LOCKED", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-test-'));
    const first = lockingProcess(dir, { namespaced: true });
    expect(await first.said).toBe('held 1');
    const second = lockingProcess(dir, { namespaced: true });
    expect(await second.said).toBe(
      `STATE_DIR_LOCKED: state directory ${dir} is in use by a process not visible from here (another pid namespace or user); its LOCK names pid 1`,
    );
    // Seen from here, the holder is named by its pid in this namespace.
    expect(() => lockStateDir(dir)).toThrow(
      expect.objectContaining({
        code: 'STATE_DIR_LOCKED',
        details: { dir, pid: commandPidHere(first.child) },
      }),
    );
    await killNamespaced(first.child);
    // A restarted container, pid 1 again as the LOCK left behind says: it starts.
    const restarted = lockingProcess(dir, { namespaced: true });
    expect(await restarted.said).toBe('held 1');
  });

  it('a holder killed with SIGKILL frees the directory at once: the kernel drops its lock, the LOCK it left behind does not count', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-test-'));
    const holder = await holderProcess(dir);
    await killHard(holder);
    expect(readFileSync(join(dir, 'LOCK'), 'utf8')).toBe(String(holder.pid));
    lockStateDir(dir)();
  });

  it('regression: a LOCK left behind naming a live process that does not hold the directory (its pid taken by another after a restart) kept the directory locked for good', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-test-'));
    writeFileSync(join(dir, 'LOCK'), String(process.ppid));
    const unlock = lockStateDir(dir);
    expect(readFileSync(join(dir, 'LOCK'), 'utf8')).toBe(String(process.pid));
    unlock();
  });
});
