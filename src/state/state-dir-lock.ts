// One process at a time in a state directory: two replicas restoring and checkpointing the
// same partition files would each take the other's writes for their own.
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StateError } from './errors.ts';

/** Directories locked by this process: another instance here (tests run several) is a holder too. */
const heldHere = new Set<string>();

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The pid in the directory's lock file, when a live holder other than the caller has it. */
function liveHolder(dir: string): number | undefined {
  let holder: number;
  try {
    holder = Number(readFileSync(join(dir, 'LOCK'), 'utf8').trim());
  } catch {
    return undefined;
  }
  // This process's pid in a lock it does not hold: a container restarted with the same pid.
  if (holder === process.pid) return heldHere.has(resolve(dir)) ? holder : undefined;
  return Number.isInteger(holder) && holder > 0 && isAlive(holder) ? holder : undefined;
}

/** Takes the directory's lock file (a stale one, of a process that died, is taken over); returns the unlock. */
export function lockStateDir(dir: string): () => void {
  const path = join(dir, 'LOCK');
  for (;;) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = liveHolder(dir);
      if (holder !== undefined) {
        throw new StateError('STATE_DIR_LOCKED', `state directory ${dir} is in use by process ${holder}`, {
          details: { dir, pid: holder },
        });
      }
      rmSync(path, { force: true });
    }
  }
  heldHere.add(resolve(dir));
  return () => {
    heldHere.delete(resolve(dir));
    rmSync(path, { force: true });
  };
}

/**
 * Removes directories under `parent` named `prefix...` that no live process holds: the
 * private state directories of processes killed before they could remove their own.
 */
export function reapStateDirs(parent: string, prefix: string): void {
  for (const name of readdirSync(parent)) {
    if (!name.startsWith(prefix)) continue;
    const dir = join(parent, name);
    // A directory without a lock may be one another process created a moment ago.
    const mtime = statSync(dir, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
    const abandoned = existsSync(join(dir, 'LOCK')) || Date.now() - mtime > 60_000;
    if (abandoned && liveHolder(dir) === undefined) rmSync(dir, { recursive: true, force: true });
  }
}
