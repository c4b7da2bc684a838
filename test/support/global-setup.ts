import type { TestProject } from 'vitest/node';
import { startInfrastructure } from '../../deploy/local/infra.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Main broker's bootstrap address (`host:port`). */
    kafkaBrokers: string;
    /** Every broker started for the compatibility matrix, main one first. */
    kafkaMatrix: { version: string; bootstrap: string }[];
    /** Confluent-compatible schema registry root, e.g. http://127.0.0.1:8081/apis/ccompat/v7 */
    schemaRegistryUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const infra = await startInfrastructure();
  const [main] = infra.brokers;
  if (!main) throw new Error('no Kafka broker was started');
  project.provide('kafkaBrokers', main.bootstrap);
  project.provide('kafkaMatrix', infra.brokers);
  project.provide('schemaRegistryUrl', infra.schemaRegistryUrl);
  console.log(
    `test infrastructure (${infra.mode}): ${infra.brokers.map((b) => `Kafka ${b.version} at ${b.bootstrap}`).join(', ')}; registry at ${infra.schemaRegistryUrl}`,
  );
  return () => infra.stop();
}
