// Building a backlog and draining it: the measurement most benchmarks share. A backlog is
// produced once per benchmark; each run drains it from the start with a consumer group and
// output topics of its own, deleted afterwards.
import type { Message } from 'kafkajs';
import type { Config, ConfigInput } from '../../src/config/index.ts';
import type { RunningSandbox } from '../../src/sandbox/index.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { benchSandbox, pipelineConfig, type BenchContext } from './context.ts';
import type { WorkerResult } from './jobs.ts';
import {
  distinctPartner,
  partnerEncoder,
  produceBacklog,
  upstream,
  type PartnerEncoder,
} from './partners.ts';
import { brokerCpuMeter, cpuMeter } from './process-stats.ts';
import { runWorker, type WorkerOptions } from './spawn.ts';
import { createOutputTopics, createTopics, deleteTopics, pipelineTopics, uniqueName } from './topics.ts';

/** Distinct lookup contents of the throughput backlogs; the instant sandbox caches them all. */
export const POOL = 20_000;

export interface Backlog {
  topic: string;
  count: number;
  /** Mean size of a record's value (Confluent wire format), in bytes. */
  recordBytes: number;
  produceMs: number;
}

/** A topic holding `count` distinct partners (their contents cycle through a pool of `poolSize`). */
export async function produceDistinct(
  context: BenchContext,
  prefix: string,
  count: number,
  poolSize = POOL,
): Promise<Backlog> {
  const topic = uniqueName(prefix);
  await createTopics(context.kafka, [{ topic }]);
  const encode = await partnerEncoder({ url: context.registryUrl }, topic);
  const pool = upstream(poolSize);
  let bytes = 0;
  const started = performance.now();
  await produceBacklog(context.kafka, topic, count, (i) => {
    const message = distinctMessage(pool, encode, i);
    bytes += message.value.length;
    return message;
  });
  return { topic, count, recordBytes: Math.round(bytes / count), produceMs: performance.now() - started };
}

function distinctMessage(pool: readonly PartnerRecord[], encode: PartnerEncoder, i: number) {
  const partner = distinctPartner(pool, i);
  return { key: partner.partnerId, value: encode(partner) };
}

/**
 * produceDistinct's messages for `topic`, encoded ahead (its subject registered): to produce
 * them while a drain is timed at little cost to the machine.
 */
export async function encodeDistinct(
  context: BenchContext,
  topic: string,
  count: number,
  poolSize = POOL,
): Promise<Message[]> {
  const encode = await partnerEncoder({ url: context.registryUrl }, topic);
  const pool = upstream(poolSize);
  return Array.from({ length: count }, (_, i) => distinctMessage(pool, encode, i));
}

/** Drains `count` records of `input` with partner-enrich in a child process. */
export async function drainWithPipeline(
  context: BenchContext,
  sandbox: RunningSandbox,
  input: string,
  count: number,
  overrides: ConfigInput = {},
  workerOptions: WorkerOptions & { inspect?: (topics: Config['topics']) => Promise<void> } = {},
): Promise<WorkerResult> {
  const topics = pipelineTopics('run', input);
  const created = await createOutputTopics(context.kafka, topics);
  const meter = cpuMeter();
  const broker = brokerCpuMeter();
  try {
    const config = pipelineConfig(context, sandbox.url, topics, overrides);
    const result = await runWorker({ kind: 'pipeline', count, config }, workerOptions);
    // The sandbox serves from this process: its CPU time over the run (the child's start-up included).
    result.details.sandboxCpuMs = meter().processMs;
    const brokerMs = broker();
    if (brokerMs !== undefined) result.details.brokerCpuMs = brokerMs;
    await workerOptions.inspect?.(topics);
    return result;
  } finally {
    // The sandbox keeps every bulk it was sent; none is in flight between runs.
    sandbox.state.bulks.clear();
    await deleteTopics(context.kafka, created);
  }
}

/** Drains `count` records of `input` with the raw kafkajs passthrough in a child process. */
export async function drainRaw(context: BenchContext, input: string, count: number): Promise<WorkerResult> {
  const output = uniqueName('raw-out');
  await createTopics(context.kafka, [{ topic: output }]);
  const broker = brokerCpuMeter();
  try {
    const result = await runWorker({
      kind: 'raw',
      count,
      brokers: [context.bootstrap],
      registryUrl: context.registryUrl,
      input,
      output,
      groupId: uniqueName('raw'),
    });
    const brokerMs = broker();
    if (brokerMs !== undefined) result.details.brokerCpuMs = brokerMs;
    return result;
  } finally {
    await deleteTopics(context.kafka, [output]);
  }
}

/**
 * The instant sandbox the throughput benchmarks share, its outcome cache filled by one
 * pipeline pass over the pool, so that runs measure the pipeline rather than the matcher.
 */
export async function warmInstantSandbox(context: BenchContext): Promise<RunningSandbox> {
  const sandbox = await benchSandbox();
  // The whole pool at any --scale: a backlog cycles through all of it, and a content not
  // cached would be matched during a timed drain.
  const count = POOL;
  const warmup = await produceDistinct(context, 'warmup', count);
  try {
    const result = await drainWithPipeline(context, sandbox, warmup.topic, count);
    context.log(
      `sandbox warm-up: ${count} lookups cached (${result.recordsPerSecond.toFixed(0)} records/s cold)`,
    );
  } finally {
    await deleteTopics(context.kafka, [warmup.topic]);
  }
  return sandbox;
}
