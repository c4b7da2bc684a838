// One Apicurio registry for the whole chaos run (it keeps schemas in memory, so it is never
// killed: each scenario takes it away behind its own proxy). Brokers, sandboxes and replicas
// are started by each scenario, because scenarios kill them.
import type { TestProject } from 'vitest/node';
import { startApicurioRegistry } from '../../../deploy/local/schema-registry.ts';
import { defaultInfrastructureOptions } from '../../../deploy/local/infra.ts';
import { closeRunDir, keepsLogs, openChaosRun } from './run-dir.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The registry's Confluent-compatible root, reached directly (scenarios put a proxy in front). */
    chaosRegistryUrl: string;
    /** The run's folder, printed at start: each scenario makes its own inside it. */
    chaosRunPath: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const run = await openChaosRun();
  const { apicurioVersion, kafkaVersions } = defaultInfrastructureOptions();
  const registry = await startApicurioRegistry(run, apicurioVersion);
  project.provide('chaosRegistryUrl', registry.url);
  project.provide('chaosRunPath', run.path);
  const kept = keepsLogs() ? ', kept after the run (CHAOS_KEEP_LOGS=true)' : '';
  console.log(
    `chaos: Kafka ${kafkaVersions[0]}, registry at ${registry.url}, processes and logs in ${run.path}${kept}`,
  );
  return () => closeRunDir(run, { graceMs: 15_000 });
}
