// The Kafka source when kafkajs's consumer crashes. A crash for a retriable reason comes only
// after the client's retries (the broker away for about 80 s), which the shared test broker
// cannot be made to do here: the consumer is a stand-in that decides whether to restart as
// kafkajs 2.2.4 does (src/consumer/index.js: a retriable error restarts unless the consumer's
// retry.restartOnFailure says no) and emits its CRASH event.
import { EventEmitter } from 'node:events';
import type { Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { KafkaSource } from '../../src/kafka/kafka-source.ts';
import type { PartitionRef, SourceHandler } from '../../src/pipeline/ports.ts';

const EVENTS = {
  GROUP_JOIN: 'consumer.group_join',
  REBALANCING: 'consumer.rebalancing',
  CRASH: 'consumer.crash',
};

type ConsumerOptions = {
  retry?: { retries?: number; restartOnFailure?: (error: Error) => Promise<boolean> };
};

function standInKafka() {
  const emitter = new EventEmitter();
  let options: ConsumerOptions = {};
  const consumer = {
    events: EVENTS,
    on: (event: string, listener: (event: unknown) => void) => emitter.on(event, listener),
    connect: async () => {},
    subscribe: async () => {},
    run: async () => {
      emitter.emit(EVENTS.GROUP_JOIN, {
        payload: { memberId: 'member-1', memberAssignment: { partners: [0, 1] } },
      });
    },
    pause() {},
    resume() {},
    disconnect: async () => {},
  };
  const kafka = {
    consumer: (given: ConsumerOptions) => {
      options = given;
      return consumer;
    },
  } as unknown as Kafka;
  /** kafkajs's crash handling for a retriable error (its retries exhausted). */
  const crash = async (error: Error) => {
    const restart = !options.retry?.restartOnFailure || (await options.retry.restartOnFailure(error));
    emitter.emit(EVENTS.CRASH, { payload: { error, groupId: 'group', restart } });
  };
  return { kafka, crash, options: () => options };
}

describe('KafkaSource', () => {
  it('regression: a consumer crashed after its retries was restarted in-process, out of its group, while the pipeline looked ready; the crash now fails the source', async () => {
    const { kafka, crash, options } = standInKafka();
    const source = new KafkaSource(kafka, { topic: 'partners', groupId: 'group', sessionTimeoutMs: 30_000 });
    const owned = new Set<number>();
    const failures: Error[] = [];
    const handler: SourceHandler = {
      offer: () => true,
      assigned: (partitions: PartitionRef[]) => partitions.forEach((p) => owned.add(p.partition)),
      revoked: (partitions: PartitionRef[]) => partitions.forEach((p) => owned.delete(p.partition)),
      rebalancing: () => {},
      failed: (error) => failures.push(error),
    };
    await source.start(handler);
    expect([...owned]).toEqual([0, 1]);

    const outage = Object.assign(new Error('Connection error: connect ECONNREFUSED'), {
      name: 'KafkaJSNumberOfRetriesExceeded',
    });
    await crash(outage);
    expect([...owned]).toEqual([]);
    expect(failures).toEqual([outage]);
    // The client's retries (createKafka's), not a count of the consumer's own.
    expect(options().retry?.retries).toBeUndefined();
  });
});
