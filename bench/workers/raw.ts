// The baseline of the pipeline overhead benchmark: what kafkajs alone does with the same
// records on the same broker. Consume, decode the Avro value with the registry's writer
// schema (the pipeline's own decoder), encode it again, produce it with the pipeline's
// producer settings (idempotent, acks from all replicas), commit after the batch is acked.
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { Kafka, logLevel, type Message } from 'kafkajs';
import { registerTopicEncoder } from '../../src/kafka/avro-encoder.ts';
import { avroPartnerDecoder } from '../../src/serde/partner-decoders.ts';
import type { WorkerJob, WorkerResult } from '../support/jobs.ts';
import { cpuMeter, peakRssMb, until, type CpuUse } from '../support/process-stats.ts';

export async function rawPassthrough(
  job: Extract<WorkerJob, { kind: 'raw' }>,
  ready: () => void,
): Promise<WorkerResult> {
  const kafka = new Kafka({ clientId: 'bench-raw', brokers: job.brokers, logLevel: logLevel.ERROR });
  const registry = new SchemaRegistry({ host: job.registryUrl });
  const decoder = avroPartnerDecoder(registry);
  const encoder = await registerTopicEncoder(registry, job.output, 'PartnerRecord');
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  const consumer = kafka.consumer({ groupId: job.groupId, allowAutoTopicCreation: false });
  await Promise.all([producer.connect(), consumer.connect()]);
  await consumer.subscribe({ topic: job.input, fromBeginning: true });
  let done = 0;
  let cpu: CpuUse | undefined;
  let first: number | undefined;
  let meter: (() => CpuUse) | undefined;
  let last = 0;
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch, heartbeat }) => {
      if (first === undefined) {
        first = performance.now();
        meter = cpuMeter();
      }
      const messages: Message[] = [];
      for (const message of batch.messages) {
        const partner = await decoder.decode(message.value as Buffer);
        messages.push({ key: message.key, value: encoder.encode(partner) });
      }
      await producer.send({ topic: job.output, acks: -1, messages });
      const next = String(BigInt(batch.lastOffset()) + 1n);
      await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: next }]);
      done += messages.length;
      last = performance.now();
      if (done >= job.count) cpu ??= meter?.();
      await heartbeat();
    },
  });
  ready();
  await until(
    () => done >= job.count,
    () => `raw passthrough: ${done} of ${job.count}`,
    30 * 60_000,
  );
  const elapsedMs = last - (first ?? last);
  await consumer.disconnect();
  await producer.disconnect();
  return {
    records: done,
    elapsedMs,
    recordsPerSecond: done / (elapsedMs / 1000),
    peakRssMb: peakRssMb(),
    details: { cpuMs: cpu?.processMs ?? 0, machineBusy: cpu?.machineBusy ?? 0 },
  };
}
