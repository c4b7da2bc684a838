// How `run` goes down, in a process of its own: the exit path calls process.exit and listens
// for real signals.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';

const exitPath = new URL('../../src/cli/exit-path.ts', import.meta.url).pathname;
const errors = new URL('../../src/errors.ts', import.meta.url).pathname;
const logger = new URL('../../src/observability/logger.ts', import.meta.url).pathname;

/**
 * A process whose start failed with `error` (the product's own error, or another) and whose
 * closing of what it opened never ends; it writes "closing" once it is in that close.
 */
function failedStartClosing(error: 'product' | 'unexpected') {
  const script = `
    import { ExitPath } from ${JSON.stringify(exitPath)};
    import { PartnerEnrichError } from ${JSON.stringify(errors)};
    import { createLogger } from ${JSON.stringify(logger)};
    const exit = new ExitPath({ logger: createLogger({ level: 'info' }), boundMs: 60_000 });
    exit.failStart(${
      error === 'product'
        ? "new PartnerEnrichError('STATE_DIR_LOCKED', 'state directory /data is in use by process 7')"
        : "new TypeError('undefined is not a function')"
    });
    setInterval(() => {}, 1_000);
    process.stdout.write('closing\\n');
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closing = new Promise<void>((resolve) =>
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('closing\n')) resolve();
    }),
  );
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  // The log lines go to stdout, the command's report to stderr, as `run`'s do.
  return { child, closing, exited, logs: () => stdout, stderr: () => stderr };
}

describe('the exit path of a failed start', () => {
  it("regression: a signal while a failed start closed exited 1 with the start's error only in the log; now with the start's code and its one-line report", async () => {
    const failed = failedStartClosing('product');
    await failed.closing;
    failed.child.kill('SIGTERM');
    expect(await failed.exited).toBe(2);
    expect(failed.stderr()).toContain(
      'partner-enrich: STATE_DIR_LOCKED: state directory /data is in use by process 7',
    );
    expect(failed.logs()).toContain('second signal while stopping');
  });

  it('exits 1 on a signal while a start that failed unexpectedly closes, its error reported', async () => {
    const failed = failedStartClosing('unexpected');
    await failed.closing;
    failed.child.kill('SIGTERM');
    expect(await failed.exited).toBe(1);
    expect(failed.stderr()).toContain('partner-enrich: unexpected failure');
    expect(failed.stderr()).toContain('undefined is not a function');
  });
});

describe('the exit path of a stop that hangs', () => {
  it('exits 1 at the bound and names the close step under way', async () => {
    const script = `
      import { ExitPath } from ${JSON.stringify(exitPath)};
      import { createLogger } from ${JSON.stringify(logger)};
      const exit = new ExitPath({ logger: createLogger({ level: 'info' }), boundMs: 200 });
      void exit.stopping.then(() => {
        exit.closing('committing, checkpointing the partner state');
        exit.closing('closing the input (leaving the consumer group)');
      });
      setInterval(() => {}, 1_000);
      process.stdout.write('running\\n');
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    const running = new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('running\n')) resolve();
      }),
    );
    const exited = once(child, 'exit').then(([code]) => code as number | null);
    await running;
    child.kill('SIGTERM');
    expect(await exited).toBe(1);
    const bound = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; closing?: string })
      .find((entry) => entry.msg === 'did not stop in time: exiting now');
    expect(bound?.closing).toBe('closing the input (leaving the consumer group)');
  });
});
