// Consumer lag of the pipeline's group on the input topic, published every 15 seconds
// (end offset minus committed offset per partition) for the consumer_lag metric.
import type { Admin } from 'kafkajs';
import { pipelineEvents } from '../observability/events.ts';

export interface LagSubject {
  topic: string;
  groupId: string;
}

/** Reports with `admin`, which it connects and, when stopped, disconnects. */
export function startLagReporter(
  admin: Admin,
  { topic, groupId }: LagSubject,
  intervalMs = 15_000,
): { stop(): Promise<void> } {
  // A failed connection is tried again at the next report: remembered, it failed every
  // report for the life of the process (a broker away at start left no lag figure ever).
  let connected: Promise<void> | undefined;
  const connect = () =>
    (connected ??= admin.connect().catch((error: unknown) => {
      connected = undefined;
      throw error;
    }));
  const report = async () => {
    await connect();
    const [ends, committed] = await Promise.all([
      admin.fetchTopicOffsets(topic),
      admin.fetchOffsets({ groupId, topics: [topic] }),
    ]);
    const offsets = new Map(committed[0]?.partitions.map((p) => [p.partition, Number(p.offset)]) ?? []);
    for (const end of ends) {
      const done = offsets.get(end.partition) ?? -1;
      const lag = Number(end.high) - (done < 0 ? Number(end.low) : done);
      pipelineEvents.lag.publish({ topic, partition: end.partition, lag: Math.max(0, lag) });
    }
  };
  // One report at a time: with the client's retries one can take over a minute.
  let reporting: Promise<void> | undefined;
  const tick = () => {
    reporting ??= report()
      // A figure that can no longer be read is not left standing as if it were current (the
      // autoscaler and the alerts read it); every replica reports the group's lag, so the
      // others' figures remain.
      .catch(() => pipelineEvents.lag.publish({ topic, unknown: true }))
      .finally(() => (reporting = undefined));
  };
  void connect().catch(() => {});
  const timer = setInterval(tick, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await reporting;
      await connected?.catch(() => {});
      await admin.disconnect();
    },
  };
}
