// The naive client the pipeline is compared with: the same Kafka ends, but one v4 lookup
// per record (serially, or `concurrency` at a time with p-limit), the results of a fetched
// batch produced together and the batch committed after that.
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { Kafka, logLevel, type Message } from 'kafkajs';
import pLimit from 'p-limit';
import { toJsonRecord } from '../../src/mapping/lookup-task.ts';
import { RefDataClient } from '../../src/refdata/index.ts';
import { avroPartnerDecoder } from '../../src/serde/partner-decoders.ts';
import type { WorkerJob, WorkerResult } from '../support/jobs.ts';
import { cpuMeter, peakRssMb, until, type CpuUse } from '../support/process-stats.ts';

export async function naiveClient(
  job: Extract<WorkerJob, { kind: 'naive' }>,
  ready: () => void,
): Promise<WorkerResult> {
  const kafka = new Kafka({ clientId: 'bench-naive', brokers: job.brokers, logLevel: logLevel.ERROR });
  const decoder = avroPartnerDecoder(new SchemaRegistry({ host: job.registryUrl }));
  const client = new RefDataClient({
    roots: { base: job.sandboxUrl },
    credentials: { apiKey: 'sandbox-api-key' },
  });
  const limit = pLimit(job.concurrency);
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
      const lookups = wanted.map((message) =>
        limit(async (): Promise<Message> => {
          const partner = await decoder.decode(message.value as Buffer);
          const page = await client.lookupBusinessPartnersV4({
            body: { businessPartner: { jsonRecord: toJsonRecord(partner) }, limit: 10 },
          });
          await heartbeat();
          const best = page.values?.[0];
          const result = {
            partnerId: partner.partnerId,
            svcId: best?.svcId ?? null,
            score: best?.score ?? 0,
          };
          return { key: message.key, value: Buffer.from(JSON.stringify(result)) };
        }),
      );
      const messages = await Promise.all(lookups);
      await producer.send({ topic: job.output, acks: -1, messages });
      const next = String(BigInt((wanted.at(-1) as { offset: string }).offset) + 1n);
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
    () => `naive client: ${done} of ${job.count}`,
    30 * 60_000,
    50,
  );
  const elapsedMs = last - (first ?? last);
  await consumer.disconnect();
  await producer.disconnect();
  return {
    records: done,
    elapsedMs,
    recordsPerSecond: done / (elapsedMs / 1000),
    peakRssMb: peakRssMb(),
    details: { concurrency: job.concurrency, cpuMs: cpu?.processMs ?? 0, machineBusy: cpu?.machineBusy ?? 0 },
  };
}
