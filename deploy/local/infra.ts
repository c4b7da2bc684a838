// Test and demo infrastructure: a real Kafka broker (one per requested version) and a
// real Confluent-compatible schema registry, chosen in this order:
//   1. KAFKA_BROKERS / SCHEMA_REGISTRY_URL set: use them as they are;
//   2. a Docker engine answers: testcontainers (see containers.ts);
//   3. otherwise Kafka and Apicurio Registry from Maven Central, run with `java`.
//
// As a command (`npm run infra`) it starts everything, prints the addresses and keeps
// running until interrupted.
import { join } from 'node:path';
import { cacheRoot } from './artifacts.ts';
import { startKafkaBroker } from './kafka-broker.ts';
import { createRunDir, reapStaleRuns, stopProcess, stopStartedServices } from './processes.ts';
import { startApicurioRegistry } from './schema-registry.ts';

export interface Infrastructure {
  /** How it was provided: `external`, `testcontainers` or `local-jvm`. */
  mode: 'external' | 'testcontainers' | 'local-jvm';
  /** Brokers in the order of the requested versions; the first is the main one. */
  brokers: { version: string; bootstrap: string }[];
  schemaRegistryUrl: string;
  stop(): Promise<void>;
}

export interface InfrastructureOptions {
  kafkaVersions: string[];
  apicurioVersion: string;
}

// 3.0.x is the newest Apicurio line that runs on Java 17 (3.1 and later need Java 21).
export const defaultInfrastructureOptions = (env = process.env): InfrastructureOptions => ({
  kafkaVersions: (env.PARTNER_ENRICH_KAFKA_VERSIONS ?? '4.4.0,3.9.2')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean),
  apicurioVersion: env.PARTNER_ENRICH_APICURIO_VERSION ?? '3.0.9',
});

async function startLocalJvm(options: InfrastructureOptions): Promise<Infrastructure> {
  const runsRoot = join(cacheRoot(), 'run');
  await reapStaleRuns(runsRoot);
  const runDir = await createRunDir(runsRoot);
  const stop = async () => {
    await Promise.all(runDir.pids.map((pid) => stopProcess(pid)));
    const { rm } = await import('node:fs/promises');
    await rm(runDir.path, { recursive: true, force: true });
  };
  try {
    const [registry, ...brokers] = await Promise.all([
      startApicurioRegistry(runDir, options.apicurioVersion),
      ...options.kafkaVersions.map((version) => startKafkaBroker(runDir, version)),
    ]);
    return {
      mode: 'local-jvm',
      brokers: brokers as { version: string; bootstrap: string }[],
      schemaRegistryUrl: (registry as { url: string }).url,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

export async function startInfrastructure(
  options: InfrastructureOptions = defaultInfrastructureOptions(),
  env = process.env,
): Promise<Infrastructure> {
  if (env.KAFKA_BROKERS && env.SCHEMA_REGISTRY_URL) {
    return {
      mode: 'external',
      brokers: [{ version: env.KAFKA_VERSION ?? 'external', bootstrap: env.KAFKA_BROKERS }],
      schemaRegistryUrl: env.SCHEMA_REGISTRY_URL,
      stop: async () => {},
    };
  }
  const { dockerAvailable, startContainers } = await import('./containers.ts');
  if (await dockerAvailable()) return startContainers(options);
  return startLocalJvm(options);
}

/**
 * From now on, SIGINT, SIGTERM or SIGHUP stops what was started so far, then exits; call the
 * function returned with the infrastructure once it is up, which is then stopped instead.
 */
export function stopOnSignal(): (infra: Infrastructure) => void {
  let started: Infrastructure | undefined;
  const shutdown = async () => {
    await (started?.stop() ?? stopStartedServices());
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, shutdown);
  return (infra) => {
    started = infra;
  };
}

if (import.meta.main) {
  if (process.argv.length > 2) {
    const help = ['--help', '-h'].includes(process.argv[2] ?? '');
    (help ? console.log : console.error)(
      'usage: npm run infra (node deploy/local/infra.ts): starts a Kafka broker per version of ' +
        'PARTNER_ENRICH_KAFKA_VERSIONS and a schema registry, prints their addresses, stops them on Ctrl-C',
    );
    process.exit(help ? 0 : 2);
  }
  const started = Date.now();
  const startedUp = stopOnSignal();
  const infra = await startInfrastructure();
  startedUp(infra);
  console.log(`# ${infra.mode} infrastructure ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  for (const broker of infra.brokers) console.log(`# Kafka ${broker.version}: ${broker.bootstrap}`);
  console.log(`KAFKA_BROKERS=${infra.brokers[0]?.bootstrap}`);
  console.log(`SCHEMA_REGISTRY_URL=${infra.schemaRegistryUrl}`);
  console.log('# Ctrl-C stops and removes everything');
  setInterval(() => {}, 1 << 30);
}
