// A start-up check that the cluster answers, with a short retry of its own: the clients the
// pipeline runs with retry for about 80 s to ride out a broker restart, which is right once
// running and wrong for a start against a cluster that is not there (the supervisor retries).
import { Kafka, logLevel, type KafkaConfig } from 'kafkajs';
import { KafkaError } from './errors.ts';

export async function probeBrokers(config: KafkaConfig): Promise<void> {
  const admin = new Kafka({ ...config, logLevel: logLevel.NOTHING, retry: { retries: 2 } }).admin();
  try {
    await admin.connect();
    await admin.describeCluster();
  } catch (error) {
    // Credentials the broker refuses are no outage: the supervisor's retries cannot fix them.
    if ((error as Error).name === 'KafkaJSSASLAuthenticationError' && config.sasl)
      throw new KafkaError(
        'KAFKA_AUTHENTICATION_FAILED',
        `the broker refused the SASL ${config.sasl.mechanism.toUpperCase()} credentials of user ` +
          `${'username' in config.sasl ? config.sasl.username : '(unnamed)'} (${(error as Error).message}): check kafka.sasl`,
        { cause: error },
      );
    throw new KafkaError(
      'KAFKA_UNAVAILABLE',
      `no broker of ${[config.brokers].flat().join(', ')} answered: ${(error as Error).message}`,
      { cause: error },
    );
  } finally {
    await admin.disconnect().catch(() => {});
  }
}
