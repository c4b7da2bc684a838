// Processes as containers run them: each at pid 1 of a pid namespace of its own, on the same
// kernel and files as this one (root only).
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * `command` behind `unshare`, which passes no signal on (signal the command by its pid here)
 * and kills the command with SIGKILL when killed itself.
 */
export const inPidNamespace = (command: string[]): string[] => [
  'unshare',
  '--pid',
  '--fork',
  '--mount-proc',
  '--kill-child',
  ...command,
];

/** The pid, in this namespace, of the command that `unshare` started in a namespace of its own. */
export const commandPidHere = (unshare: ChildProcess): number =>
  Number(readFileSync(`/proc/${unshare.pid}/task/${unshare.pid}/children`, 'utf8').trim());
