// The sandbox served from a child process of its own, for a benchmark that measures the
// service's timing: the quota windows of the rerun benchmark. Served from the orchestrator, the
// sandbox shared its event loop and heap with the load generator, the latency consumer and what
// the earlier benchmarks left: 700-1,000 MB of heap by the rerun benchmark of a full run, major
// GCs pausing it up to 216 ms, and a pause over a window's last 250 ms left that window short
// (docs/BENCHMARKS.md, Reruns: the sandbox's own process). A reference data service is a
// process of its own too.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Consume } from '../pipeline/quota.ts';
import { track } from './children.ts';

/** Parent to child. */
export type SandboxCommand = { type: 'consumes' } | { type: 'forget-bulks' } | { type: 'close' };

/** Child to parent. */
export type SandboxReply =
  | { type: 'ready'; url: string }
  | { type: 'consumes'; consumes: Consume[] }
  | { type: 'done' }
  | { type: 'failed'; message: string };

export interface SandboxProcess {
  url: string;
  /** Every quota consume the sandbox answered since the last call (the child forgets them). */
  takeConsumes(): Promise<Consume[]>;
  /** Drops the bulks it keeps (none is in flight between runs). */
  forgetBulks(): Promise<void>;
  close(): Promise<void>;
}

const childPath = fileURLToPath(new URL('./sandbox-child.ts', import.meta.url));

/** Starts the benchmarks' instant sandbox in a child process. */
export async function startSandboxProcess(): Promise<SandboxProcess> {
  const child = track(fork(childPath, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`sandbox process exited with code ${code}`))),
  );
  exited.catch(() => {});
  const next = <T extends SandboxReply['type']>(type: T) =>
    Promise.race([
      new Promise<Extract<SandboxReply, { type: T }>>((resolve, reject) => {
        const listener = (reply: SandboxReply) => {
          if (reply.type === 'failed') reject(new Error(`sandbox process failed: ${reply.message}`));
          else if (reply.type !== type) return;
          else resolve(reply as Extract<SandboxReply, { type: T }>);
          child.off('message', listener);
        };
        child.on('message', listener);
      }),
      exited,
    ]);
  const ask = <T extends SandboxReply['type']>(command: SandboxCommand, type: T) => {
    const reply = next(type);
    child.send(command);
    return reply;
  };
  const { url } = await next('ready');
  return {
    url,
    takeConsumes: async () => (await ask({ type: 'consumes' }, 'consumes')).consumes,
    forgetBulks: async () => void (await ask({ type: 'forget-bulks' }, 'done')),
    close: async () => {
      await ask({ type: 'close' }, 'done');
      await exited.catch(() => {});
    },
  };
}
