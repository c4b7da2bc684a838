// The sandbox on a real port: what the CLI, the integration tests and benchmarks start.

import type { AddressInfo } from 'node:net';
import { buildSandboxApp } from './app.ts';
import { SandboxError } from './errors.ts';
import type { SandboxOptions } from './options.ts';
import type { SandboxState } from './state/sandbox-state.ts';

export interface RunningSandbox {
  /** Root of all five APIs, e.g. http://127.0.0.1:40123 */
  url: string;
  state: SandboxState;
  close(): Promise<void>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const sandbox = buildSandboxApp(options);
  const { app } = sandbox;
  const { port: wanted, host: on } = sandbox.options;
  try {
    await app.listen({ port: wanted, host: on });
  } catch (error) {
    await app.close();
    const systemCode = (error as NodeJS.ErrnoException).code;
    throw new SandboxError(
      'SANDBOX_LISTEN_FAILED',
      `the sandbox cannot listen on ${on}:${wanted}: ${(error as Error).message}`,
      { cause: error, details: { host: on, port: wanted, ...(systemCode ? { systemCode } : {}) } },
    );
  }
  const { address, port } = app.server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    state: sandbox.state,
    close: () => app.close(),
  };
}
