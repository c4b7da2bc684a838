// The consumer lag `run` publishes, read from the real broker; the connection to it is cut
// and mended by the test (a socket factory), as a broker that goes away and comes back.
import { connect, type Socket } from 'node:net';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { startLagReporter } from '../../src/cli/lag-reporter.ts';
import { pipelineEvents, type LagEvent } from '../../src/observability/index.ts';
import { eventually, kafkaClient, uniqueName, withTopics } from '../support/kafka.ts';

/** A client whose connections fail while `cut` is set: new ones at once, open ones when cut. */
function severableKafka() {
  const sockets = new Set<Socket>();
  const link = { cut: false, refused: 0 };
  const kafka = new Kafka({
    clientId: uniqueName('lag'),
    brokers: [inject('kafkaBrokers')],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 500,
    retry: { retries: 1, initialRetryTime: 50, maxRetryTime: 100 },
    socketFactory: ({ host, port, onConnect }) => {
      const socket = connect({ host, port }, onConnect);
      if (link.cut) {
        link.refused += 1;
        setImmediate(() => socket.destroy(new Error('broker away')));
      }
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      return socket;
    },
  });
  return {
    kafka,
    /** Connections that failed because the link was cut. */
    get refused() {
      return link.refused;
    },
    cut() {
      link.cut = true;
      for (const socket of sockets) socket.destroy(new Error('broker away'));
    },
    mend() {
      link.cut = false;
    },
  };
}

describe('the lag reporter', { timeout: 60_000 }, () => {
  const topic = uniqueName('lag-input');
  const groupId = uniqueName('lag-group');
  let cleanup: () => Promise<void>;
  const events: LagEvent[] = [];
  let unsubscribe: () => void;
  const lastOf = (partition: number) =>
    events.findLast((e) => 'unknown' in e || e.partition === partition) as LagEvent | undefined;

  beforeAll(async () => {
    const kafka = kafkaClient();
    ({ cleanup } = await withTopics(kafka, [{ topic, numPartitions: 2 }]));
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic,
      messages: [
        ...Array.from({ length: 5 }, () => ({ partition: 0, value: 'x' })),
        ...Array.from({ length: 3 }, () => ({ partition: 1, value: 'y' })),
      ],
    });
    await producer.disconnect();
    unsubscribe = pipelineEvents.lag.subscribe((event) => {
      if (event.topic === topic) events.push(event);
    });
  });
  afterAll(async () => {
    unsubscribe();
    await cleanup();
  });

  it("publishes each partition's records not yet committed by the group", async () => {
    events.length = 0;
    const reporter = startLagReporter(kafkaClient().admin(), { topic, groupId }, 100);
    try {
      await eventually(() => lastOf(0) !== undefined && lastOf(1) !== undefined, 20_000, 'both partitions');
      expect(lastOf(0)).toEqual({ topic, partition: 0, lag: 5 });
      expect(lastOf(1)).toEqual({ topic, partition: 1, lag: 3 });
    } finally {
      await reporter.stop();
    }
  });

  it('regression: a lag that can no longer be read is said unknown, not left standing at its last figure (the broker away, its series kept its value)', async () => {
    events.length = 0;
    const broker = severableKafka();
    const reporter = startLagReporter(broker.kafka.admin(), { topic, groupId }, 100);
    try {
      await eventually(() => lastOf(0) !== undefined, 20_000, 'a first figure');
      broker.cut();
      await eventually(() => events.at(-1)?.['unknown' as never] === true, 20_000, 'the lag said unknown');
      broker.mend();
      await eventually(() => !('unknown' in (events.at(-1) ?? {})), 20_000, 'a figure again');
      expect(lastOf(0)).toEqual({ topic, partition: 0, lag: 5 });
    } finally {
      await reporter.stop();
    }
  });

  it('regression: a reporter whose first connection failed reports once the broker answers (it never connected again)', async () => {
    events.length = 0;
    const broker = severableKafka();
    broker.cut();
    const reporter = startLagReporter(broker.kafka.admin(), { topic, groupId }, 100);
    try {
      await eventually(() => broker.refused > 0, 20_000, 'a failed connection');
      broker.mend();
      await eventually(
        () => lastOf(0) !== undefined && !('unknown' in (lastOf(0) as LagEvent)),
        20_000,
        'a figure',
      );
      expect(lastOf(0)).toEqual({ topic, partition: 0, lag: 5 });
    } finally {
      await reporter.stop();
    }
  });
});
