// A steady load on an input topic: distinct partners produced at a fixed rate, each stamped
// with its creation time (the record's timestamp), which latency is measured from.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Message } from 'kafkajs';
import type { BenchContext } from './context.ts';
import { POOL } from './drain.ts';
import { distinctPartner, partnerEncoder, upstream } from './partners.ts';

export interface SteadyLoadOptions {
  /** Records per second. */
  rate: number;
  /** Stops after this many records. */
  total?: number;
  /** Stops at the next send once aborted. */
  signal?: AbortSignal;
  /** Index of the first partner (distinctPartner): ids of their own beside other partners. */
  firstIndex?: number;
}

export interface SteadyLoad {
  /** Creation time per partner id. */
  createdAt: Map<string, number>;
  startedAt: number;
  seconds: number;
  sent: number;
}

/** Produces records at `rate` per second until `total` are sent or `signal` aborts. */
export async function steadyLoad(
  context: BenchContext,
  topic: string,
  options: SteadyLoadOptions,
): Promise<SteadyLoad> {
  const { rate, total = Number.POSITIVE_INFINITY, signal, firstIndex = 0 } = options;
  const encode = await partnerEncoder({ url: context.registryUrl }, topic);
  const pool = upstream(POOL);
  const producer = context.kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const createdAt = new Map<string, number>();
  const started = Date.now();
  let sent = 0;
  try {
    while (sent < total && !signal?.aborted) {
      const due = Math.min(total, Math.floor((rate * (Date.now() - started)) / 1000)) - sent;
      if (due <= 0) {
        await sleep(5);
        continue;
      }
      const messages: Message[] = [];
      for (let i = sent; i < sent + due; i += 1) {
        const partner = distinctPartner(pool, firstIndex + i);
        const now = Date.now();
        createdAt.set(partner.partnerId, now);
        messages.push({ key: partner.partnerId, value: encode(partner), timestamp: String(now) });
      }
      sent += due;
      await producer.send({ topic, acks: -1, messages });
    }
  } finally {
    await producer.disconnect();
  }
  return { createdAt, startedAt: started, seconds: (Date.now() - started) / 1000, sent };
}
