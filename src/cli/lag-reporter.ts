// Consumer lag of the pipeline's group on the input topic, published every 15 seconds
// (end offset minus committed offset per partition) for the consumer_lag metric.
import type { Config } from '../config/index.ts';
import { pipelineEvents } from '../observability/events.ts';
import { createKafka } from './enrichment.ts';

export function startLagReporter(config: Config, intervalMs = 15_000): { stop(): Promise<void> } {
  const admin = createKafka(config.kafka).admin();
  const connected = admin.connect();
  // A failed connection is the report's to see; without this it would be unhandled until then.
  connected.catch(() => {});
  const report = async () => {
    await connected;
    const topic = config.topics.input;
    const [ends, committed] = await Promise.all([
      admin.fetchTopicOffsets(topic),
      admin.fetchOffsets({ groupId: config.kafka.groupId, topics: [topic] }),
    ]);
    const offsets = new Map(committed[0]?.partitions.map((p) => [p.partition, Number(p.offset)]) ?? []);
    for (const end of ends) {
      const done = offsets.get(end.partition) ?? -1;
      const lag = Number(end.high) - (done < 0 ? Number(end.low) : done);
      pipelineEvents.lag.publish({ topic, partition: end.partition, lag: Math.max(0, lag) });
    }
  };
  const timer = setInterval(() => void report().catch(() => {}), intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await connected.catch(() => {});
      await admin.disconnect();
    },
  };
}
