// One process at a time in a state directory: two replicas restoring and checkpointing the
// same partition files would each take the other's writes for their own.
import {
  accessSync,
  constants,
  existsSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { StateError } from './errors.ts';

/**
 * The file whose lock is the directory's. A pid in a file and a look for whether it lives
 * cannot tell the holder from another process of that pid: two containers sharing one volume
 * both run as pid 1, and each took the other's LOCK for its own. SQLite takes POSIX record
 * locks, which the kernel keeps per file for the process that took them, whatever its pid
 * namespace or user, and drops when it dies (SIGKILL included); Node has no API of its own
 * for them. Never removed: a process that opened the file before its removal would lock the
 * old one while the next start locks a new one.
 */
const LOCK_DATABASE = 'LOCK.db';

/** SQLite's result code for a lock another connection holds. */
const SQLITE_BUSY = 5;

/** The holder's pid, written once it holds the lock: for an operator and the refusal's message. */
const PID_FILE = 'LOCK';

/**
 * The lock connections of this process, by directory. Another instance here (tests run several)
 * is refused by SQLite as another process is, and named with this process's pid. Kept here,
 * too, for the process's life as the caller may not keep its unlock: a connection collected
 * is closed, and its lock freed.
 */
const heldHere = new Map<string, DatabaseSync>();

/**
 * The directory's lock, held by the returned connection until it is closed or the process
 * ends; undefined when another connection, of this process or another, holds it. BEGIN
 * EXCLUSIVE takes the file's exclusive lock at once (a busy timeout of 0: no waiting), and
 * the exclusive locking mode keeps it after the transaction, which is never ended anyway.
 */
function takeLock(dir: string): DatabaseSync | undefined {
  const db = new DatabaseSync(join(dir, LOCK_DATABASE), { timeout: 0 });
  try {
    db.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE');
    return db;
  } catch (error) {
    db.close();
    if ((error as { errcode?: number }).errcode === SQLITE_BUSY) return undefined;
    throw error;
  }
}

/**
 * A live process other than this one with a file in `dir` open (Linux: its /proc/PID/fd
 * links), but for `except`; `first` is looked at before the others. Processes of another
 * user or pid namespace are not seen; without /proc (not Linux) none is.
 */
function processWithFilesIn(dir: string, { first, except = [] }: { first?: number; except?: string[] } = {}) {
  const inside = `${realpathSync(dir)}/`;
  const excepted = new Set(except.map((name) => inside + name));
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const pids = names.map(Number).filter((pid) => Number.isInteger(pid) && pid !== process.pid);
  pids.sort((a, b) => Number(b === first) - Number(a === first));
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      // Gone meanwhile, or another user's.
      continue;
    }
    for (const fd of fds) {
      try {
        const file = readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (file.startsWith(inside) && !excepted.has(file)) return pid;
      } catch {
        // Closed meanwhile.
      }
    }
  }
  return undefined;
}

/** The pid in LOCK, if it names one. */
function pidInLock(dir: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dir, PID_FILE), 'utf8').trim());
  } catch {
    // None yet (its holder is about to write it), or removed.
    return undefined;
  }
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

const lockedBy = (dir: string, pid: number) =>
  new StateError('STATE_DIR_LOCKED', `state directory ${dir} is in use by process ${pid}`, {
    details: { dir, pid },
  });

/**
 * The refusal of a directory whose lock another holds, naming the holder by its pid where this
 * process can see it: this process, or one with a file of the directory open (the holder keeps
 * the lock database open), LOCK's pid looked at first. Otherwise LOCK's pid is no more than
 * what it says: a process of another pid namespace may have the pid of one here, or this
 * process's own.
 */
function locked(dir: string): StateError {
  const lockPid = pidInLock(dir);
  const pid = heldHere.has(resolve(dir)) ? process.pid : processWithFilesIn(dir, { first: lockPid });
  if (pid !== undefined) return lockedBy(dir, pid);
  const named = lockPid === undefined ? 'its LOCK names no pid' : `its LOCK names pid ${lockPid}`;
  return new StateError(
    'STATE_DIR_LOCKED',
    `state directory ${dir} is in use by a process not visible from here (another pid namespace or user); ${named}`,
    { details: { dir, ...(lockPid === undefined ? {} : { lockPid }) } },
  );
}

/**
 * Takes the directory's lock (one a process left behind when it died is free: the kernel
 * dropped it) and writes LOCK; returns the unlock.
 */
export function lockStateDir(dir: string): () => void {
  // SQLite says no more than "unable to open database file" of a directory that cannot be
  // written; the system's reason (EROFS, EACCES) is the operator's to see.
  accessSync(dir, constants.W_OK);
  const lock = takeLock(dir);
  if (!lock) throw locked(dir);
  const key = resolve(dir);
  try {
    // The lock database removed under a live holder: this process locked a new one, while the
    // holder still has the old one open (its link reads "<dir>/LOCK.db (deleted)"), and its
    // partition files. Who has the current LOCK or lock database open holds nothing: a start
    // being refused, reading LOCK.
    const holder = heldHere.has(key)
      ? process.pid
      : processWithFilesIn(dir, { except: [LOCK_DATABASE, PID_FILE] });
    if (holder !== undefined) throw lockedBy(dir, holder);
    writeFileSync(join(dir, PID_FILE), String(process.pid));
  } catch (error) {
    lock.close();
    throw error;
  }
  heldHere.set(key, lock);
  return () => {
    heldHere.delete(key);
    // Removed while still held: no other process can have written it meanwhile.
    rmSync(join(dir, PID_FILE), { force: true });
    lock.close();
  };
}

/** Whether `dir`'s folder `keep` holds anything. */
function holds(dir: string, keep: string): boolean {
  try {
    return readdirSync(join(dir, keep)).length > 0;
  } catch {
    return false;
  }
}

/** Removes all of `dir` but the names in `kept`. */
function removeAllBut(dir: string, kept: string[]): void {
  for (const name of readdirSync(dir))
    if (!kept.includes(name)) rmSync(join(dir, name), { recursive: true, force: true });
}

/**
 * Removes a private state directory at exit, except what it holds in `keep` (a folder in it)
 * when that is not empty: the directory is then left for the next start's reapStateDirs,
 * with LOCK naming this process, so that it is taken at once (a directory without LOCK is
 * left alone for a minute: it may be one another process is about to lock).
 */
export function removePrivateStateDir(dir: string, keep: string): void {
  if (!holds(dir, keep)) {
    rmSync(dir, { recursive: true, force: true });
    return;
  }
  removeAllBut(dir, [keep]);
  writeFileSync(join(dir, PID_FILE), String(process.pid));
}

/**
 * Removes directories under `parent` named `prefix...` whose lock no process holds: the
 * private state directories of processes killed before they could remove their own. The
 * lock is taken for the removal, so no process starts in the directory meanwhile;
 * `beforeRemove` is given each directory under it. Its folder `keep`, when `beforeRemove`
 * left something in it (kept for another process to take), stays with the lock files.
 */
export function reapStateDirs(
  parent: string,
  prefix: string,
  { keep, beforeRemove = () => {} }: { keep?: string; beforeRemove?: (dir: string) => void } = {},
): void {
  for (const name of readdirSync(parent)) {
    if (!name.startsWith(prefix)) continue;
    const dir = join(parent, name);
    // A directory without LOCK may be one another process created a moment ago and is about
    // to lock: holding its lock now would refuse that process.
    const mtime = statSync(dir, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
    if (!existsSync(join(dir, PID_FILE)) && Date.now() - mtime <= 60_000) continue;
    let lock: DatabaseSync | undefined;
    try {
      lock = takeLock(dir);
    } catch {
      // Gone meanwhile (another start reaped it), or another user's.
      continue;
    }
    if (!lock) continue;
    beforeRemove(dir);
    // LOCK keeps the dead holder's pid: the directory is taken at once by the next reaper.
    if (keep && holds(dir, keep)) removeAllBut(dir, [keep, PID_FILE, LOCK_DATABASE]);
    else rmSync(dir, { recursive: true, force: true });
    lock.close();
  }
}
