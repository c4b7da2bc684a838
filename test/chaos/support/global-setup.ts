// One Apicurio registry for the whole chaos run (it keeps schemas in memory, so it is never
// killed: each scenario takes it away behind its own proxy). Brokers, sandboxes and replicas
// are started by each scenario, because scenarios kill them.
import { rm } from 'node:fs/promises';
import type { TestProject } from 'vitest/node';
import { stopProcess } from '../../../deploy/local/processes.ts';
import { startApicurioRegistry } from '../../../deploy/local/schema-registry.ts';
import { defaultInfrastructureOptions } from '../../../deploy/local/infra.ts';
import { chaosRunDir } from './run-dir.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The registry's Confluent-compatible root, reached directly (scenarios put a proxy in front). */
    chaosRegistryUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runDir = await chaosRunDir(true);
  const registry = await startApicurioRegistry(runDir, defaultInfrastructureOptions().apicurioVersion);
  project.provide('chaosRegistryUrl', registry.url);
  console.log(`chaos: registry at ${registry.url}, processes in ${runDir.path}`);
  return async () => {
    await Promise.all(runDir.pids.map((pid) => stopProcess(pid)));
    await rm(runDir.path, { recursive: true, force: true });
  };
}
