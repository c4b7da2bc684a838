// The input of the benchmarks: PartnerRecords about the sandbox's organizations (the
// upstream mix of faithful, noisy and unknown ones), produced as Avro in the Confluent
// wire format, the way an upstream producer would.
import type { Kafka, Message } from 'kafkajs';
import { registerTopicEncoder, type RegistryEndpoint } from '../../src/kafka/avro-encoder.ts';
import { generateDataset, type SandboxDataset } from '../../src/sandbox/dataset/dataset.ts';
import { upstreamPartners, type UpstreamOptions } from '../../src/sandbox/upstream-partners.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { pipelineSchema } from '../../src/serde/schemas.ts';

/** Organizations of the sandbox the benchmarks start, and the seed of its dataset. */
export const ORGANIZATIONS = 10_000;
export const SEED = 42;

let dataset: SandboxDataset | undefined;
const sandboxDataset = (): SandboxDataset =>
  (dataset ??= generateDataset({ organizations: ORGANIZATIONS, seed: SEED }));

/** `count` valid upstream records (no invalid ones, repeats and updates only when asked for). */
export function upstream(count: number, shares: Partial<UpstreamOptions> = {}): PartnerRecord[] {
  return upstreamPartners(sandboxDataset(), {
    count,
    seed: SEED,
    invalid: 0,
    resent: 0,
    updated: 0,
    ...shares,
  }).map((record) => record.partner as PartnerRecord);
}

/**
 * Record `i` of a stream of distinct partners: the content of pool[i % pool size] under an id
 * of its own, so no record coalesces with another, while the reference service sees a bounded
 * set of distinct lookups (its instant-mode cache holds them all after one pass).
 */
export function distinctPartner(pool: readonly PartnerRecord[], i: number): PartnerRecord {
  const content = pool[i % pool.length] as PartnerRecord;
  return { ...content, partnerId: `B-${String(i).padStart(8, '0')}` };
}

export type PartnerEncoder = (partner: PartnerRecord) => Buffer;

/** Registers PartnerRecord under the topic's subject; encodes synchronously from then on. */
export async function partnerEncoder(registry: RegistryEndpoint, topic: string): Promise<PartnerEncoder> {
  const encoder = await registerTopicEncoder(registry, topic, 'PartnerRecord');
  return (partner) => encoder.encode(partner);
}

/**
 * Produces `count` messages as fast as the broker takes them (batches of 2,000, a few in
 * flight, acks from all replicas): how a backlog is built before a drain is timed.
 */
export async function produceBacklog(
  kafka: Kafka,
  topic: string,
  count: number,
  messageAt: (i: number) => Message,
): Promise<void> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    const batch = 2_000;
    const inFlight = new Set<Promise<unknown>>();
    for (let start = 0; start < count; start += batch) {
      const messages: Message[] = [];
      for (let i = start; i < Math.min(count, start + batch); i += 1) messages.push(messageAt(i));
      const sent = producer.send({ topic, acks: -1, messages });
      inFlight.add(sent);
      void sent.finally(() => inFlight.delete(sent)).catch(() => {});
      if (inFlight.size >= 4) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
  } finally {
    await producer.disconnect();
  }
}

/** Mean size of a pool record's value in the Confluent wire format (5 header bytes + Avro body). */
export function meanRecordBytes(pool: readonly PartnerRecord[]): number {
  const type = pipelineSchema('PartnerRecord').type;
  const total = pool.reduce((sum, partner, i) => sum + 5 + type.toBuffer(distinctPartner(pool, i)).length, 0);
  return Math.round(total / pool.length);
}
