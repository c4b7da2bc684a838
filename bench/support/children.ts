// The child processes the benchmarks start, so that the orchestrator can end the ones a
// failed benchmark or a signal left behind: a worker waiting for records that will not come
// would otherwise outlive the run, and take the shared cores from the benchmarks after it.
import type { ChildProcess } from 'node:child_process';

const running = new Set<ChildProcess>();

/** Registers a child until it exits. */
export function track<T extends ChildProcess>(child: T): T {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/** SIGKILLs every registered child still running. */
export function killChildren(): void {
  for (const child of running) child.kill('SIGKILL');
}
