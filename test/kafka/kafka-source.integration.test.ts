// The Kafka source on the real broker: how its close leaves the group, and how long it may wait
// for kafkajs's consumer.
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaSource, LEAVE_GROUP_MS } from '../../src/kafka/kafka-source.ts';
import {
  coordinatorMovedClient,
  eventually,
  fetchLosingClient,
  kafkaClient,
  uniqueName,
  withTopics,
} from '../support/kafka.ts';

describe('KafkaSource on the real broker', () => {
  const topic = uniqueName('input');
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ cleanup } = await withTopics(kafkaClient(), [{ topic, numPartitions: 1 }]));
  });
  afterAll(async () => cleanup());

  /** A source of its own group, started and assigned the topic's partition. */
  const assignedSource = async (kafka: Kafka, groupId: string): Promise<KafkaSource> => {
    const source = new KafkaSource(kafka, { topic, groupId, sessionTimeoutMs: 30_000 });
    const assigned = Promise.withResolvers<undefined>();
    await source.start({
      offer: () => true,
      assigned: () => assigned.resolve(undefined),
      revoked: () => {},
      rebalancing: () => {},
      failed: () => {},
    });
    await assigned.promise;
    return source;
  };

  it("regression: its close waited out kafkajs's retry backoff (a SIGTERM during a broker failover took 4 s there, a follower the whole exit bound); now the member is left behind after LEAVE_GROUP_MS", async () => {
    // kafkajs's disconnect waits for the fetch loop, which waits its backoff (20 s here).
    const fetches = fetchLosingClient(20_000);
    const source = await assignedSource(fetches.kafka, uniqueName('group'));
    fetches.brokerAway();
    await eventually(() => fetches.lost >= 1, 30_000, 'a fetch lost');

    const started = performance.now();
    await source.stop();
    await source.close();
    // kafkajs's own stop took the backoff's 16-24 s.
    expect(performance.now() - started).toBeLessThan(LEAVE_GROUP_MS + 3_000);
  });

  it('regression: a leave answered "not the coordinator" (its coordinator moved, as in a broker failover) left the member in the group until its session timed out; now it leaves at the new coordinator', async () => {
    const groupId = uniqueName('group');
    const moved = coordinatorMovedClient(1);
    const source = await assignedSource(moved.kafka, groupId);

    await source.stop();
    await source.close();

    expect(moved.answered).toBe(1);
    // Within the session timeout (30 s), only a leave takes the member out of the group.
    const admin = kafkaClient().admin();
    await admin.connect();
    try {
      const { groups } = await admin.describeGroups([groupId]);
      expect(groups[0]?.members.map((member) => member.memberId)).toEqual([]);
    } finally {
      await admin.disconnect();
    }
  });
});
