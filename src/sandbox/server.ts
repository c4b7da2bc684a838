// The sandbox on a real port: what the CLI, the integration tests and benchmarks start.

import type { AddressInfo } from 'node:net';
import { buildSandboxApp } from './app.ts';
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
  await app.listen({ port: sandbox.options.port, host: sandbox.options.host });
  const { address, port } = app.server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    state: sandbox.state,
    close: () => app.close(),
  };
}
