// Exactly-once transactions of one input partition against the real broker: each commits its
// outputs and the consumed offset together, one after another on the partition's producer.
import type { Kafka } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import { installCompressionCodecs } from '../../src/kafka/compression-codecs.ts';
import { readAll } from '../support/enrichment.ts';
import {
  batchCodecs,
  eventually,
  kafkaClient,
  lossyKafkaClient,
  setTopicLimit,
  TXN_OFFSET_COMMIT_API_KEY,
  uniqueName,
  withTopics,
} from '../support/kafka.ts';
import { plainTransactions } from '../support/plain-transactions.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setUp(): Promise<{ kafka: Kafka; input: string; output: string; groupId: string }> {
  const kafka = kafkaClient();
  const base = uniqueName('txn');
  const input = `${base}.in`;
  const output = `${base}.out`;
  const { cleanup } = await withTopics(kafka, [
    { topic: input, numPartitions: 1 },
    { topic: output, numPartitions: 1 },
  ]);
  cleanups.push(cleanup);
  return { kafka, input, output, groupId: `${base}-group` };
}

async function committedOffsets(kafka: Kafka, groupId: string, topic: string) {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return committed?.partitions;
  } finally {
    await admin.disconnect();
  }
}

describe('KafkaPartitionTransactions', () => {
  it('CONCURRENT_TRANSACTIONS: a transaction with no outputs right after a committed one commits its offset (kafkajs as patched retries AddOffsetsToTxn; it did not)', async () => {
    const { kafka, input, output, groupId } = await setUp();
    const ref = { topic: input, partition: 0 };
    const txns = plainTransactions(kafka, groupId, output);
    await txns.open(ref);
    try {
      // A transaction with outputs, then one with the offset only: the coordinator is often
      // still writing the first one's markers when the second one's AddOffsetsToTxn arrives.
      for (let offset = 1; offset <= 40; offset += 2) {
        const messages = txns.prepare([{ output: 'matches', key: `k${offset}`, value: null }]);
        await txns.commit(ref, messages, { ...ref, offset });
        await txns.commit(ref, [], { ...ref, offset: offset + 1 });
      }
    } finally {
      await txns.closeAll();
    }
    expect(await committedOffsets(kafka, groupId, input)).toEqual([
      { partition: 0, offset: '40', metadata: null },
    ]);
  }, 60_000);

  it("regression: kafkajs gave a transaction's requests its default 5 retries (about 9 s), whatever the client's retry settings: an offset commit whose group coordinator moved for longer failed the transaction (TRANSACTION_FAILED, which ends `run`); now they retry as the client says", async () => {
    const { input, output, groupId } = await setUp();
    // More losses in a row than kafkajs's default retries allow (5; 15 under NODE_ENV=test).
    let lost = 0;
    const lossy = lossyKafkaClient({
      retry: { retries: 30, initialRetryTime: 10, maxRetryTime: 50 },
      lost: (request) => request.readInt16BE(4) === TXN_OFFSET_COMMIT_API_KEY && ++lost <= 20,
    });
    const ref = { topic: input, partition: 0 };
    const txns = plainTransactions(lossy, groupId, output);
    await txns.open(ref);
    try {
      const messages = txns.prepare([{ output: 'matches', key: 'k1', value: null }]);
      await txns.commit(ref, messages, { ...ref, offset: 1 });
    } finally {
      await txns.closeAll();
    }
    expect(lost).toBe(21);
    expect(await committedOffsets(kafkaClient(), groupId, input)).toEqual([
      { partition: 0, offset: '1', metadata: null },
    ]);
  }, 60_000);

  it("regression: a topic's limit lowered after start: the broker's refusal fails the transaction as OUTPUT_REFUSED_AS_TOO_LARGE (it was TRANSACTION_FAILED), nothing committed", async () => {
    const { kafka, input, output, groupId } = await setUp();
    const ref = { topic: input, partition: 0 };
    const txns = plainTransactions(kafka, groupId, output);
    await txns.open(ref);
    try {
      await setTopicLimit(kafka, output, 16 * 1024);
      const messages = txns.prepare([{ output: 'matches', key: 'x'.repeat(20_000), value: null }]);
      const error = await txns.commit(ref, messages, { ...ref, offset: 1 }).catch((e: unknown) => e);
      expect(error).toMatchObject({
        code: 'OUTPUT_REFUSED_AS_TOO_LARGE',
        canRetry: false,
        details: { limits: { [output]: 1_000_000 } },
      });
    } finally {
      await txns.closeAll();
    }
    expect(await committedOffsets(kafka, groupId, input)).toEqual([
      { partition: 0, offset: '-1', metadata: null },
    ]);
  }, 60_000);

  it('commits zstd-compressed outputs (kafka.compression) with the offset, read back as sent', async () => {
    installCompressionCodecs();
    const { kafka, input, output, groupId } = await setUp();
    const ref = { topic: input, partition: 0 };
    const txns = plainTransactions(kafka, groupId, output, { compression: 'zstd' });
    await txns.open(ref);
    try {
      const messages = txns.prepare(
        ['k1', 'k2', 'k3'].map((key) => ({ output: 'matches', key, value: null })),
      );
      await txns.commit(ref, messages, { ...ref, offset: 1 });
    } finally {
      await txns.closeAll();
    }
    // Read again until the commit's markers are written: a read_committed fetch before that
    // returns nothing, which the reader takes for the partition's end.
    const codecs = new Set<string>();
    let read: string[] = [];
    await eventually(
      async () => {
        for (const codec of await batchCodecs(async () => {
          read = (await readAll(kafka, output)).map((m) => String(m.value));
        }))
          codecs.add(codec);
        return read.length === 3;
      },
      10_000,
      'the committed outputs read',
    );
    expect(codecs).toEqual(new Set(['zstd']));
    expect(read).toEqual(['k1', 'k2', 'k3']);
    expect(await committedOffsets(kafka, groupId, input)).toEqual([
      { partition: 0, offset: '1', metadata: null },
    ]);
  }, 60_000);
});
