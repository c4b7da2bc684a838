// One process at a time in a state directory: two replicas restoring and checkpointing the
// same partition files would each take the other's writes for their own.
import {
  closeSync,
  existsSync,
  fstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
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

const locked = (dir: string, pid: number) =>
  new StateError('STATE_DIR_LOCKED', `state directory ${dir} is in use by process ${pid}`, {
    details: { dir, pid },
  });

/**
 * A live process other than this one with a file in `dir` open (Linux: its /proc/PID/fd
 * links). A holder keeps its LOCK open for its life, so one whose LOCK was deleted from under
 * it is found all the same (the link reads "<dir>/LOCK (deleted)"), as is one with partition
 * files open. Processes of another user or pid namespace are not seen, as their pids in a
 * LOCK are not; without /proc (not Linux) none is.
 */
function processWithFilesIn(dir: string): number | undefined {
  const inside = `${realpathSync(dir)}/`;
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return undefined;
  }
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${name}/fd`);
    } catch {
      // Gone meanwhile, or another user's.
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${name}/fd/${fd}`).startsWith(inside)) return pid;
      } catch {
        // Closed meanwhile.
      }
    }
  }
  return undefined;
}

/**
 * Takes the directory's lock file (a stale one, of a process that died, is taken over) and
 * keeps it open; returns the unlock. Deleting the file does not free the directory while its
 * holder lives (see processWithFilesIn).
 */
export function lockStateDir(dir: string): () => void {
  const path = join(dir, 'LOCK');
  let fd: number;
  for (;;) {
    try {
      fd = openSync(path, 'wx');
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = liveHolder(dir);
      if (holder !== undefined) throw locked(dir, holder);
      rmSync(path, { force: true });
    }
  }
  writeSync(fd, String(process.pid));
  const holder = heldHere.has(resolve(dir)) ? process.pid : processWithFilesIn(dir);
  if (holder !== undefined) {
    closeSync(fd);
    rmSync(path, { force: true });
    throw locked(dir, holder);
  }
  heldHere.add(resolve(dir));
  const { ino } = fstatSync(fd);
  return () => {
    heldHere.delete(resolve(dir));
    closeSync(fd);
    // Only this process's LOCK: not one put in the place of a deleted one.
    if (statSync(path, { throwIfNoEntry: false })?.ino === ino) rmSync(path, { force: true });
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
