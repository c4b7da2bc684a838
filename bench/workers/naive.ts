// The naive client the pipeline is compared with: the same Kafka ends, but one v4 lookup
// per record (serially, or `concurrency` at a time with p-limit), the results of a fetched
// batch produced together and the batch committed after that.
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { Message } from 'kafkajs';
import pLimit from 'p-limit';
import { toJsonRecord } from '../../src/mapping/lookup-task.ts';
import { RefDataClient } from '../../src/refdata/index.ts';
import { avroPartnerDecoder } from '../../src/serde/partner-decoders.ts';
import type { WorkerJob, WorkerResult } from '../support/jobs.ts';
import { runBatchWorker } from '../support/batch-worker.ts';

export async function naiveClient(
  job: Extract<WorkerJob, { kind: 'naive' }>,
  ready: () => void,
): Promise<WorkerResult> {
  const decoder = avroPartnerDecoder(new SchemaRegistry({ host: job.registryUrl }));
  const client = new RefDataClient({
    roots: { base: job.sandboxUrl },
    credentials: { apiKey: 'sandbox-api-key' },
  });
  const limit = pLimit(job.concurrency);
  const { cpu, ...run } = await runBatchWorker(
    job,
    'naive',
    async (messages, heartbeat) => {
      const lookups = messages.map((message) =>
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
      return Promise.all(lookups);
    },
    ready,
  );
  return {
    ...run,
    details: { concurrency: job.concurrency, cpuMs: cpu?.processMs ?? 0, machineBusy: cpu?.machineBusy ?? 0 },
  };
}
