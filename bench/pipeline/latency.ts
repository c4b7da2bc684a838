// 6. Latency: from an input record's timestamp (set by the producer when it creates the
// record) to its MatchResult being appended to the matches topic (LogAppendTime, the
// broker's clock on the same machine), under a steady load at half the measured maximum.
// The first tenth of each run is warm-up and left out.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Message } from 'kafkajs';
import { readTopicToEnd } from '../../src/kafka/topic-reader.ts';
import { pipelineConfig, type BenchContext } from '../support/context.ts';
import { POOL } from '../support/drain.ts';
import { distinctPartner, partnerEncoder, upstream } from '../support/partners.ts';
import { startWorker } from '../support/spawn.ts';
import { percentile, spread, type Spread } from '../support/stats.ts';
import {
  createOutputTopics,
  createTopics,
  deleteTopics,
  pipelineTopics,
  uniqueName,
} from '../support/topics.ts';

export interface LatencyResult {
  /** Offered load, records/s: half the pipeline's measured maximum. */
  rate: number;
  seconds: number;
  p50: Spread;
  p95: Spread;
  p99: Spread;
  max: Spread;
  runs: {
    records: number;
    measured: number;
    offeredRate: number;
    p50: number;
    p95: number;
    p99: number;
    max: number;
  }[];
}

/** Produces `total` records at `rate` per second; returns each key's creation time. */
async function steadyLoad(
  context: BenchContext,
  topic: string,
  rate: number,
  total: number,
): Promise<{ createdAt: Map<string, number>; startedAt: number; seconds: number }> {
  const encode = await partnerEncoder({ url: context.registryUrl }, topic);
  const pool = upstream(POOL);
  const producer = context.kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const createdAt = new Map<string, number>();
  const started = Date.now();
  let sent = 0;
  try {
    while (sent < total) {
      const due = Math.min(total, Math.floor((rate * (Date.now() - started)) / 1000)) - sent;
      if (due <= 0) {
        await sleep(5);
        continue;
      }
      const messages: Message[] = [];
      for (let i = sent; i < sent + due; i += 1) {
        const partner = distinctPartner(pool, i);
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
  return { createdAt, startedAt: started, seconds: (Date.now() - started) / 1000 };
}

export async function latencyUnderLoad(
  context: BenchContext,
  maxRecordsPerSecond: number,
): Promise<LatencyResult> {
  const sandbox = await context.instantSandbox();
  // BENCH_LATENCY_RATE offers a load of its own instead (records/s).
  const rate = Number(process.env.BENCH_LATENCY_RATE) || Math.round(maxRecordsPerSecond / 2);
  const seconds = Math.max(10, Math.round(30 * context.scale));
  const total = rate * seconds;
  const runs: LatencyResult['runs'] = [];
  for (let run = 1; run <= context.runs; run += 1) {
    const input = uniqueName('latency-in');
    await createTopics(context.kafka, [{ topic: input }]);
    const topics = pipelineTopics('latency', input);
    const created = await createOutputTopics(context.kafka, topics, [
      { name: 'message.timestamp.type', value: 'LogAppendTime' },
    ]);
    try {
      const worker = startWorker({
        kind: 'pipeline',
        count: total,
        config: pipelineConfig(context, sandbox.url, topics),
      });
      await Promise.race([worker.ready, worker.result]);
      const load = await steadyLoad(context, input, rate, total);
      await worker.result;
      const warmupEnd = load.startedAt + seconds * 100;
      const latencies: number[] = [];
      await readTopicToEnd(context.kafka, topics.matches, (message) => {
        const created = load.createdAt.get(message.key?.toString() ?? '');
        if (created !== undefined && created >= warmupEnd)
          latencies.push(Number(message.timestamp) - created);
      });
      latencies.sort((a, b) => a - b);
      const figures = {
        records: total,
        measured: latencies.length,
        offeredRate: total / load.seconds,
        p50: percentile(latencies, 50),
        p95: percentile(latencies, 95),
        p99: percentile(latencies, 99),
        max: latencies.at(-1) ?? Number.NaN,
      };
      runs.push(figures);
      context.log(
        `run ${run}: ${figures.offeredRate.toFixed(0)} records/s offered; p50 ${figures.p50} ms, p95 ${figures.p95} ms, p99 ${figures.p99} ms, max ${figures.max} ms`,
      );
    } finally {
      await deleteTopics(context.kafka, [input, ...created]);
    }
  }
  return {
    rate,
    seconds,
    p50: spread(runs.map((r) => r.p50)),
    p95: spread(runs.map((r) => r.p95)),
    p99: spread(runs.map((r) => r.p99)),
    max: spread(runs.map((r) => r.max)),
    runs,
  };
}
