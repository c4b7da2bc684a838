// What of kafkajs (unmaintained since 2023) works on each broker version in the matrix
// (PARTNER_ENRICH_KAFKA_VERSIONS, default the latest 3.9.x and 4.x). docs/COMPATIBILITY.md
// reports these results; a failure here means the product's assumptions broke.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { Admin, Kafka } from 'kafkajs';
import { eventually, kafkaClient, uniqueName, withTopics } from '../support/kafka.ts';

const messages = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => ({ key: `k${i % 7}`, value: `${prefix}-${i}` }));

async function consumeAll(
  kafka: Kafka,
  topic: string,
  options: { groupId: string; readUncommitted?: boolean; expected: number },
): Promise<string[]> {
  const seen: string[] = [];
  const consumer = kafka.consumer({
    groupId: options.groupId,
    readUncommitted: options.readUncommitted ?? false,
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void seen.push(String(message.value)) });
  await eventually(
    () => seen.length >= options.expected,
    60_000,
    `${options.expected} messages from ${topic}`,
  );
  // Give a read_committed consumer the chance to (wrongly) deliver more.
  await new Promise((resolve) => setTimeout(resolve, 500));
  await consumer.disconnect();
  return seen;
}

describe.each(inject('kafkaMatrix'))('kafkajs on Kafka $version', ({ bootstrap }) => {
  const kafka = kafkaClient(bootstrap);
  const input = uniqueName('compat-in');
  const output = uniqueName('compat-out');
  let admin: Admin;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ admin, cleanup } = await withTopics(kafka, [
      { topic: input, numPartitions: 2 },
      { topic: output, numPartitions: 2 },
    ]));
  });
  afterAll(async () => cleanup());

  it('produces with acks=all on an idempotent producer and reads end offsets', async () => {
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({ topic: input, acks: -1, messages: messages(20, 'plain') });
    await producer.disconnect();
    const offsets = await admin.fetchTopicOffsets(input);
    expect(offsets.reduce((sum, p) => sum + Number(p.high), 0)).toBe(20);
  });

  it('consumes with a consumer group and a second member resumes from the committed offsets', async () => {
    const groupId = uniqueName('compat-group');
    expect(await consumeAll(kafka, input, { groupId, expected: 20 })).toHaveLength(20);
    const committed = await admin.fetchOffsets({ groupId, topics: [input] });
    const total = committed[0]?.partitions.reduce((sum, p) => sum + Number(p.offset), 0);
    expect(total).toBe(20);

    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: input, messages: messages(5, 'late') });
    await producer.disconnect();
    const resumed = await consumeAll(kafka, input, { groupId, expected: 5 });
    expect(resumed.sort()).toEqual(
      messages(5, 'late')
        .map((m) => m.value)
        .sort(),
    );
    const groups = await admin.describeGroups([groupId]);
    expect(groups.groups[0]?.groupId).toBe(groupId);
  });

  it('commits a transaction with sendOffsets atomically: outputs visible and input offsets committed', async () => {
    const groupId = uniqueName('compat-txn-group');
    const producer = kafka.producer({
      transactionalId: uniqueName('compat-txn'),
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    const transaction = await producer.transaction();
    await transaction.send({ topic: output, messages: messages(10, 'committed') });
    await transaction.sendOffsets({
      consumerGroupId: groupId,
      topics: [{ topic: input, partitions: [{ partition: 0, offset: '3' }] }],
    });
    await transaction.commit();

    const aborted = await producer.transaction();
    await aborted.send({ topic: output, messages: messages(10, 'aborted') });
    await aborted.abort();
    await producer.disconnect();

    const seen = await consumeAll(kafka, output, { groupId: uniqueName('compat-reader'), expected: 10 });
    expect(seen.sort()).toEqual(
      messages(10, 'committed')
        .map((m) => m.value)
        .sort(),
    );
    const committed = await admin.fetchOffsets({ groupId, topics: [input] });
    expect(committed[0]?.partitions.find((p) => p.partition === 0)?.offset).toBe('3');
  });

  it('shows aborted transactional records to read_uncommitted consumers only', async () => {
    const seen = await consumeAll(kafka, output, {
      groupId: uniqueName('compat-uncommitted'),
      readUncommitted: true,
      expected: 20,
    });
    expect(seen.filter((v) => v.startsWith('aborted'))).toHaveLength(10);
  });
});
