// One process at a time in a state directory: two replicas restoring and checkpointing the
// same partition files would each take the other's writes for their own.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StateError } from './errors.ts';

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Takes the directory's lock file (a stale one, of a process that died, is taken over); returns the unlock. */
export function lockStateDir(dir: string): () => void {
  const path = join(dir, 'LOCK');
  for (;;) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(path, 'utf8').trim());
      // Our own pid: a container restarted with the same pid after a kill.
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
        throw new StateError('STATE_DIR_LOCKED', `state directory ${dir} is in use by process ${holder}`, {
          details: { dir, pid: holder },
        });
      }
      rmSync(path, { force: true });
    }
  }
  return () => rmSync(path, { force: true });
}
