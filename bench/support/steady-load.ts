// A steady load on an input topic: distinct partners produced at a fixed rate, each stamped
// with the time it was due at that rate (the record's timestamp), which latency is measured
// from. Stamped when built instead, a record held back by a stall of this loop (it shares the
// orchestrator's event loop with the sandbox) or by a slow send would start its clock late,
// and the stall would be missing from the percentiles (coordinated omission).
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
  /** Due time per partner id (ms since the epoch). */
  createdAt: Map<string, number>;
  /** The most a record was built after its due time, in ms: how far the load fell behind. */
  maxLateMs: number;
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
  let maxLateMs = 0;
  try {
    while (sent < total && !signal?.aborted) {
      const due = Math.min(total, Math.floor((rate * (Date.now() - started)) / 1000)) - sent;
      if (due <= 0) {
        await sleep(5);
        continue;
      }
      const messages: Message[] = [];
      const now = Date.now();
      for (let i = sent; i < sent + due; i += 1) {
        const partner = distinctPartner(pool, firstIndex + i);
        // Record i is released once rate * elapsed reaches i + 1; rounded up, never after `now`.
        const dueAt = Math.ceil(started + ((i + 1) * 1000) / rate);
        maxLateMs = Math.max(maxLateMs, now - dueAt);
        createdAt.set(partner.partnerId, dueAt);
        messages.push({ key: partner.partnerId, value: encode(partner), timestamp: String(dueAt) });
      }
      sent += due;
      await producer.send({ topic, acks: -1, messages });
    }
  } finally {
    await producer.disconnect();
  }
  return { createdAt, maxLateMs, startedAt: started, seconds: (Date.now() - started) / 1000, sent };
}
