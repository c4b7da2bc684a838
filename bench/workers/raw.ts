// The baseline of the pipeline overhead benchmark: what kafkajs alone does with the same
// records on the same broker. Consume, decode the Avro value with the registry's writer
// schema (the pipeline's own decoder), encode it again, produce it with the pipeline's
// producer settings (idempotent, acks from all replicas), commit after the batch is acked.
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { registerTopicEncoder } from '../../src/kafka/avro-encoder.ts';
import { avroPartnerDecoder } from '../../src/serde/partner-decoders.ts';
import { runBatchWorker } from '../support/batch-worker.ts';
import type { WorkerJob, WorkerResult } from '../support/jobs.ts';

export async function rawPassthrough(
  job: Extract<WorkerJob, { kind: 'raw' }>,
  ready: () => void,
): Promise<WorkerResult> {
  const registry = new SchemaRegistry({ host: job.registryUrl });
  const decoder = avroPartnerDecoder(registry);
  const encoder = await registerTopicEncoder({ url: job.registryUrl }, job.output, 'PartnerRecord');
  const { cpu, ...run } = await runBatchWorker(
    job,
    'raw',
    async (messages) => {
      const out = [];
      for (const message of messages) {
        const partner = await decoder.decode(message.value as Buffer);
        out.push({ key: message.key, value: encoder.encode(partner) });
      }
      return out;
    },
    ready,
  );
  return {
    ...run,
    details: {
      cpuMs: cpu?.processMs ?? 0,
      v8HelpersCpuMs: cpu?.v8HelpersMs ?? 0,
      machineBusy: cpu?.machineBusy ?? 0,
    },
  };
}
