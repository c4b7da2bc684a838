// A start-up check that the cluster answers, with a short retry of its own: the clients the
// pipeline runs with retry for about 80 s to ride out a broker restart, which is right once
// running and wrong for a start against a cluster that is not there (the supervisor retries).
import { Kafka, logLevel, type KafkaConfig } from 'kafkajs';
import { isPartnerEnrichError } from '../errors.ts';
import { KafkaError } from './errors.ts';

// Retries for about 5 s: a broker of the cluster that crashed moments ago is still in the
// metadata (the cluster fences it after broker.session.timeout.ms, 9 s by default), and the
// probe's requests to it are refused; the brokers left answer the retries.
const PROBE_RETRY = { retries: 4, initialRetryTime: 300 };

export async function probeBrokers(config: KafkaConfig): Promise<void> {
  const admin = new Kafka({ ...config, logLevel: logLevel.NOTHING, retry: PROBE_RETRY }).admin();
  try {
    await admin.connect();
    await admin.describeCluster();
  } catch (error) {
    // An OAUTHBEARER token that could not be had (sasl.ts) says so itself.
    if (isPartnerEnrichError(error)) throw error;
    // Credentials the broker refuses are no outage: the supervisor's retries cannot fix them.
    if ((error as Error).name === 'KafkaJSSASLAuthenticationError' && config.sasl)
      throw new KafkaError(
        'KAFKA_AUTHENTICATION_FAILED',
        `the broker refused the SASL ${config.sasl.mechanism.toUpperCase()} ${whose(config.sasl)} ` +
          `(${(error as Error).message}): check kafka.sasl`,
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

/** Whose credentials the broker refused: a user's, or a token (kafkajs keeps no client id). */
const whose = (sasl: NonNullable<KafkaConfig['sasl']>): string =>
  'username' in sasl ? `credentials of user ${sasl.username}` : 'token';
