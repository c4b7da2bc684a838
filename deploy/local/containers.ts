// The Docker path of the test infrastructure: Kafka in KRaft mode and Confluent's
// schema registry as testcontainers, on one container network. Only used where a
// Docker engine answers; our CI machines have none (infra.ts falls back to the JVMs).
import type { Infrastructure, InfrastructureOptions } from './infra.ts';

/** Confluent Platform images carry Apache Kafka `major.minor` as `major+4.minor` (7.9 = 3.9, 8.0 = 4.0). */
export function confluentImageTag(kafkaVersion: string): string {
  const [major, minor] = kafkaVersion.split('.').map(Number);
  if (major === undefined || minor === undefined || Number.isNaN(major) || Number.isNaN(minor)) {
    throw new Error(`not a Kafka version: ${kafkaVersion}`);
  }
  return major >= 4 ? `${major + 4}.${minor}.0` : `7.${minor}.0`;
}

export async function dockerAvailable(): Promise<boolean> {
  if (process.env.PARTNER_ENRICH_NO_DOCKER === 'true') return false;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

export async function startContainers(options: InfrastructureOptions): Promise<Infrastructure> {
  const { GenericContainer, Network, Wait } = await import('testcontainers');
  const { KafkaContainer } = await import('@testcontainers/kafka');
  const network = await new Network().start();
  const brokers = await Promise.all(
    options.kafkaVersions.map((version, index) =>
      new KafkaContainer(`confluentinc/cp-kafka:${confluentImageTag(version)}`)
        .withKraft()
        .withNetwork(network)
        .withNetworkAliases(`kafka${index}`)
        .start()
        .then((container) => ({ version, container })),
    ),
  );
  const main = options.kafkaVersions[0] ?? '4.0.0';
  const registry = await new GenericContainer(`confluentinc/cp-schema-registry:${confluentImageTag(main)}`)
    .withNetwork(network)
    .withExposedPorts(8081)
    .withEnvironment({
      SCHEMA_REGISTRY_HOST_NAME: 'schema-registry',
      SCHEMA_REGISTRY_LISTENERS: 'http://0.0.0.0:8081',
      // The KafkaContainer's in-network listener is BROKER://<alias>:9092.
      SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS: 'PLAINTEXT://kafka0:9092',
    })
    .withWaitStrategy(Wait.forHttp('/subjects', 8081))
    .start();
  return {
    mode: 'testcontainers',
    brokers: brokers.map(({ version, container }) => ({
      version,
      bootstrap: `${container.getHost()}:${container.getMappedPort(9093)}`,
    })),
    schemaRegistryUrl: `http://${registry.getHost()}:${registry.getMappedPort(8081)}`,
    stop: async () => {
      await registry.stop();
      await Promise.all(brokers.map(({ container }) => container.stop()));
      await network.stop();
    },
  };
}
