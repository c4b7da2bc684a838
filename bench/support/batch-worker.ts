// The loop both baselines share: consume a fetched batch, turn it into output messages,
// produce them with the pipeline's producer settings (idempotent, acks from all replicas),
// commit the batch after that, and time it from the first batch to the `count`-th record.
import { Kafka, logLevel, type KafkaMessage, type Message } from 'kafkajs';
import { cpuMeter, peakRssMb, until, type CpuUse } from './process-stats.ts';

export interface BatchWorkerJob {
  brokers: string[];
  groupId: string;
  input: string;
  output: string;
  count: number;
}

export interface BatchWorkerRun {
  records: number;
  elapsedMs: number;
  recordsPerSecond: number;
  peakRssMb: number;
  cpu: CpuUse | undefined;
}

export async function runBatchWorker(
  job: BatchWorkerJob,
  name: string,
  transform: (messages: KafkaMessage[], heartbeat: () => Promise<void>) => Promise<Message[]>,
  ready: () => void,
): Promise<BatchWorkerRun> {
  const kafka = new Kafka({ clientId: `bench-${name}`, brokers: job.brokers, logLevel: logLevel.ERROR });
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
    eachBatch: async ({ batch, heartbeat, isRunning }) => {
      if (first === undefined) {
        first = performance.now();
        meter = cpuMeter();
      }
      const wanted = batch.messages.slice(0, Math.max(0, job.count - done));
      if (wanted.length === 0 || !isRunning()) return;
      const messages = await transform(wanted, heartbeat);
      await producer.send({ topic: job.output, acks: -1, messages });
      const next = String(BigInt((wanted.at(-1) as KafkaMessage).offset) + 1n);
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
    () => `${name}: ${done} of ${job.count}`,
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
    cpu,
  };
}
