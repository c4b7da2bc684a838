// End-to-end check of a machine: starts the local Kafka broker and schema registry,
// registers PartnerRecord from schemas/, produces and consumes Avro records through a
// consumer group, prints what came back and stops everything. `npm run smoke`.
import { randomUUID } from 'node:crypto';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { Kafka, logLevel } from 'kafkajs';
import { createTopicsWithLeaders } from '../../src/kafka/topics.ts';
import { pipelineSchema } from '../../src/serde/schemas.ts';
import { defaultInfrastructureOptions, startInfrastructure, stopOnSignal } from './infra.ts';

const COUNT = 1_000;
/** The records come back within seconds; a hang ends as a failure, not a wait for Ctrl-C. */
const CONSUME_TIMEOUT_MS = 60_000;
const started = Date.now();
const defaults = defaultInfrastructureOptions();
// Ctrl-C while the services start stopped node alone: the JVMs ran on.
const startedUp = stopOnSignal();
// One broker is enough here: the version matrix is the tests' business.
const infra = await startInfrastructure({ ...defaults, kafkaVersions: defaults.kafkaVersions.slice(0, 1) });
startedUp(infra);
try {
  const [broker] = infra.brokers;
  if (!broker) throw new Error('no broker started');
  console.log(
    `${infra.mode}: Kafka ${broker.version} at ${broker.bootstrap}, registry at ${infra.schemaRegistryUrl}`,
  );
  const topic = `smoke-${randomUUID().slice(0, 8)}`;
  const kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.ERROR });
  const admin = kafka.admin();
  await admin.connect();
  await createTopicsWithLeaders(admin, [{ topic, numPartitions: 3 }]);
  const registry = new SchemaRegistry({ host: infra.schemaRegistryUrl });
  const { id } = await registry.register(
    { type: SchemaType.AVRO, schema: pipelineSchema('PartnerRecord').text },
    { subject: `${topic}-value` },
  );
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  const records = Array.from({ length: COUNT }, (_, i) => ({
    partnerId: `P-${i}`,
    sourceSystem: 'SMOKE',
    names: [`Smoke Test ${i} GmbH`],
    legalForm: 'GmbH',
    addresses: [],
    identifiers: [],
    taxNumbers: [],
    changedAt: Date.now(),
  }));
  await producer.send({
    topic,
    messages: await Promise.all(
      records.map(async (r) => ({ key: r.partnerId, value: await registry.encode(id, r) })),
    ),
  });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: `${topic}-group` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let received = 0;
  await new Promise<void>((resolve, reject) => {
    setTimeout(
      () => reject(new Error(`${received} of ${COUNT} records back after ${CONSUME_TIMEOUT_MS / 1000} s`)),
      CONSUME_TIMEOUT_MS,
    ).unref();
    void consumer.run({
      eachMessage: async ({ message }) => {
        if (message.value && (await registry.decode(message.value)).partnerId) received += 1;
        if (received === COUNT) resolve();
      },
    });
  });
  await consumer.disconnect();
  await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
  console.log(
    `round trip: ${received}/${COUNT} Avro records (schema id ${id}) in ${Date.now() - started} ms`,
  );
} finally {
  await infra.stop();
}
