// A broker of a file's own with SASL and ACLs enforced (deploy/local/kafka-broker.ts, Secured),
// started before the file's tests and stopped after them, and an admin client logged in as its
// super user.
import { Kafka, logLevel } from 'kafkajs';
import { startRestartableKafkaBroker, type Secured } from '../../deploy/local/kafka-broker.ts';
import { ownBrokers } from './own-brokers.ts';

export interface SecuredBroker {
  /** Set once the broker answers (in beforeAll). */
  bootstrap: string;
  /** Logged in with SASL/PLAIN as `secured.admin`. */
  admin: Kafka;
}

export function securedBroker(prefix: string, secured: Secured): SecuredBroker {
  const broker = {} as SecuredBroker;
  ownBrokers(prefix, async (runDir, version) => {
    const started = await startRestartableKafkaBroker(runDir, version, secured);
    broker.bootstrap = started.bootstrap;
    broker.admin = new Kafka({
      brokers: [started.bootstrap],
      sasl: { mechanism: 'plain', ...secured.admin },
      logLevel: logLevel.NOTHING,
    });
  });
  return broker;
}
