// 5. Broker limit: Kafka's own ProducerPerformance and ConsumerPerformance on the same broker,
// with records of the size of the benchmarks' Avro partner records, to show how close the
// Node pipeline and the raw kafkajs passthrough get to what the broker takes.
import type { BenchContext } from '../support/context.ts';
import { spread, type Spread } from '../support/stats.ts';
import { createTopics, deleteTopics, uniqueName } from '../support/topics.ts';
import { kafkaTools, runTool } from './kafka-tools.ts';

export interface BrokerLimitResult {
  toolsVersion: string;
  records: number;
  recordBytes: number;
  /** ProducerPerformance, acks=all, unthrottled. */
  produce: Spread;
  produceMbPerSecond: Spread;
  /** ConsumerPerformance: records/s over the whole run, and over fetching only. */
  consume: Spread;
  consumeFetchOnly: Spread;
}

const number = (text: string | undefined, what: string): number => {
  const value = Number(text?.trim());
  if (!Number.isFinite(value)) throw new Error(`could not read ${what} from the tool's output`);
  return value;
};

/**
 * The run's total from ProducerPerformance's output: the line with the latency percentiles,
 * printed last. A run longer than its 5 s reporting window prints window lines of the same
 * form before it.
 */
function producerTotal(output: string): RegExpExecArray | undefined {
  return [...output.matchAll(/(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\).* 50th/g)].at(
    -1,
  );
}

export async function brokerLimit(context: BenchContext, recordBytes: number): Promise<BrokerLimitResult> {
  const tools = await kafkaTools(context.kafkaVersion);
  const records = context.count(500_000, 50_000);
  const produce: number[] = [];
  const produceMb: number[] = [];
  const consume: number[] = [];
  const fetchOnly: number[] = [];
  for (let run = 1; run <= context.runs; run += 1) {
    const topic = uniqueName('perf');
    await createTopics(context.kafka, [{ topic }]);
    try {
      const produced = await runTool(tools.libs, 'org.apache.kafka.tools.ProducerPerformance', [
        ...['--topic', topic, '--num-records', String(records), '--record-size', String(recordBytes)],
        ...['--throughput', '-1', '--producer-props', `bootstrap.servers=${context.bootstrap}`, 'acks=all'],
      ]);
      const summary = producerTotal(produced);
      produce.push(number(summary?.[2], 'records/sec'));
      produceMb.push(number(summary?.[3], 'MB/sec'));
      const consumed = await runTool(tools.libs, 'org.apache.kafka.tools.ConsumerPerformance', [
        ...['--bootstrap-server', context.bootstrap, '--topic', topic, '--num-records', String(records)],
        ...['--group', uniqueName('perf-consumer')],
      ]);
      // start.time, end.time, MB, MB.sec, nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
      const fields = consumed.trim().split('\n').at(-1)?.split(',') ?? [];
      consume.push(number(fields[5], 'nMsg.sec'));
      fetchOnly.push(number(fields[9], 'fetch.nMsg.sec'));
      context.log(
        `run ${run}: produce ${produce.at(-1)?.toFixed(0)} records/s (${produceMb.at(-1)?.toFixed(1)} MB/s), consume ${consume.at(-1)?.toFixed(0)} records/s (fetching only ${fetchOnly.at(-1)?.toFixed(0)})`,
      );
    } finally {
      await deleteTopics(context.kafka, [topic]);
    }
  }
  return {
    toolsVersion: tools.version,
    records,
    recordBytes,
    produce: spread(produce),
    produceMbPerSecond: spread(produceMb),
    consume: spread(consume),
    consumeFetchOnly: spread(fetchOnly),
  };
}
