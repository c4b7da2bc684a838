// Entry of the sandbox's child process (sandbox-process.ts): serves the benchmarks' instant
// sandbox and records the quota consumes it answers, as recordConsumes does in-process.
import { recordConsumes } from '../pipeline/quota.ts';
import { benchSandbox } from './context.ts';
import type { SandboxCommand, SandboxReply } from './sandbox-process.ts';

const send = (reply: SandboxReply) => process.send?.(reply);

try {
  const sandbox = await benchSandbox();
  const recorder = recordConsumes(sandbox);
  process.on('message', (command: SandboxCommand) => {
    switch (command.type) {
      case 'consumes':
        send({ type: 'consumes', consumes: recorder.consumes.splice(0) });
        return;
      case 'forget-bulks':
        sandbox.state.bulks.clear();
        send({ type: 'done' });
        return;
      case 'close':
        recorder.stop();
        void sandbox.close().then(() => {
          send({ type: 'done' });
          process.disconnect();
        });
    }
  });
  send({ type: 'ready', url: sandbox.url });
} catch (error) {
  send({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exitCode = 1;
  process.disconnect();
}
