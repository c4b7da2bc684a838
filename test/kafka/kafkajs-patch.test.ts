// kafkajs as patches/kafkajs+2.2.4.patch leaves it (applied by `npm install`'s postinstall):
// its producer's hashing, varints, record batch checksums and grouping rewritten for CPU.
// Each is checked against what does not come from the patch: the Java client's murmur2,
// a bit-by-bit CRC32-C, and kafkajs's own decoders, which the patch leaves alone. Last, its
// broker pool passing over a crashed broker (the other fixes for a crashed broker are proven
// against real clusters: broker-crash-start, leader-move-send, the broker-failover chaos scenario).
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import kafkajs from 'kafkajs';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);

interface Long {
  toString(): string;
}
interface EncoderInstance {
  writeVarInt(value: number): EncoderInstance;
  writeVarLong(value: number | Long): EncoderInstance;
  writeUVarInt(value: number): EncoderInstance;
  buffer: Buffer;
}
interface DecoderInstance {
  readVarInt(): number;
  readVarLong(): Long;
  readUVarInt(): number;
}
const Encoder = require('kafkajs/src/protocol/encoder.js') as {
  new (): EncoderInstance;
  sizeOfVarLong(value: number | Long): number;
};
const Decoder = require('kafkajs/src/protocol/decoder.js') as new (buffer: Buffer) => DecoderInstance;
const Long = require('kafkajs/src/utils/long.js') as { fromValue(value: number | string | bigint): Long };
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as {
  RecordBatch(batch: object): Promise<{ buffer: Buffer }>;
};
const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (
  record: object,
) => unknown;
const decodeRecordBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder.js') as (
  decoder: unknown,
) => Promise<{
  records: { key: Buffer; value: Buffer; offset: string; timestamp: string; headers: object }[];
}>;
const groupMessagesPerPartition = require('kafkajs/src/producer/groupMessagesPerPartition.js') as (
  args: object,
) => Record<string, { key: string }[]>;

/** CRC32-C one bit at a time: slow, and independent of the patch's tables. */
function crc32cBitwise(bytes: Uint8Array): number {
  let crc = ~0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k += 1) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return ~crc >>> 0;
}

describe('kafkajs as patched', () => {
  // Partitions printed by the Java client (kafka-clients 4.4.0) for these keys' UTF-8 bytes
  // over 7 partitions (Utils.toPositive(Utils.murmur2(bytes)) % 7): where other clients put them.
  it.each([
    ['', 2],
    ['a', 5],
    ['ab', 0],
    ['abc', 4],
    ['abcd', 5],
    ['21', 3],
    ['foobar', 0],
    ['partner-000123', 4],
    ['a-little-bit-longer-string', 0],
    ['Zürich-Straße-日本', 6],
  ])('the default partitioner puts key %j where the Java client does', (key, partition) => {
    const partitionMetadata = Array.from({ length: 7 }, (_, partitionId) => ({
      partitionErrorCode: 0,
      partitionId,
      leader: 0,
      replicas: [0],
      isr: [0],
    }));
    const partitioner = kafkajs.Partitioners.DefaultPartitioner();
    expect(partitioner({ topic: 't', partitionMetadata, message: { key, value: null } })).toBe(partition);
    expect(
      partitioner({ topic: 't', partitionMetadata, message: { key: Buffer.from(key), value: null } }),
    ).toBe(partition);
  });

  it('writes varints that its own decoder reads back, 32- and 64-bit, at every length', () => {
    const ints = [
      0,
      1,
      -1,
      63,
      64,
      -64,
      -65,
      127,
      128,
      8191,
      8192,
      2 ** 20,
      -(2 ** 20),
      2 ** 31 - 1,
      -(2 ** 31),
    ];
    const longs = [
      ...ints.map((n) => BigInt(n)),
      2n ** 31n,
      -(2n ** 31n) - 1n,
      2n ** 40n,
      -(2n ** 52n),
      2n ** 63n - 1n,
    ];
    const encoder = new Encoder();
    for (const n of ints) encoder.writeVarInt(n);
    for (const n of ints) encoder.writeUVarInt(n >>> 0);
    for (const n of longs) encoder.writeVarLong(Long.fromValue(n));
    for (const n of ints) encoder.writeVarLong(n);
    const decoder = new Decoder(encoder.buffer);
    expect(ints.map(() => decoder.readVarInt())).toEqual(ints);
    expect(ints.map(() => decoder.readUVarInt() >>> 0)).toEqual(ints.map((n) => n >>> 0));
    expect(longs.map(() => decoder.readVarLong().toString())).toEqual(longs.map(String));
    expect(ints.map(() => decoder.readVarLong().toString())).toEqual(ints.map(String));
    for (const n of longs) {
      const one = new Encoder().writeVarLong(Long.fromValue(n)).buffer;
      expect(Encoder.sizeOfVarLong(Long.fromValue(n))).toBe(one.length);
    }
  });

  it('checksums record batches with CRC32-C and writes records its decoder reads back', async () => {
    expect(crc32cBitwise(Buffer.from('123456789'))).toBe(0xe3069283);
    const records = Array.from({ length: 50 }, (_, i) =>
      encodeRecord({
        offsetDelta: i,
        timestampDelta: Long.fromValue(i * 1_000_003),
        key: Buffer.from(`B-${i}`),
        value: randomBytes(i * 37),
        headers: i % 3 === 0 ? { traceparent: `00-${i}` } : {},
      }),
    );
    const firstTimestamp = 1_795_000_000_000;
    const encoded = (
      await RecordBatch({ records, firstTimestamp, maxTimestamp: firstTimestamp, lastOffsetDelta: 49 })
    ).buffer;
    // firstOffset (8), length (4), leader epoch (4), magic (1), then the CRC of what follows it.
    expect(encoded.readUInt32BE(17)).toBe(crc32cBitwise(encoded.subarray(21)));
    const { records: decoded } = await decodeRecordBatch(new Decoder(encoded.subarray(0)));
    expect(decoded).toHaveLength(50);
    decoded.forEach((record, i) => {
      expect(record.key.toString()).toBe(`B-${i}`);
      expect(record.value).toHaveLength(i * 37);
      expect(record.offset).toBe(String(i));
      expect(record.timestamp).toBe(String(firstTimestamp + i * 1_000_003));
    });
  });

  it('groups a request’s messages by partition in their order', () => {
    const messages = Array.from({ length: 1000 }, (_, i) => ({ key: `k${i}`, partition: i % 3 }));
    const grouped = groupMessagesPerPartition({
      topic: 't',
      partitionMetadata: [0, 1, 2].map((partitionId) => ({ partitionId, leader: 0 })),
      messages,
      partitioner: ({ message }: { message: { partition: number } }) => message.partition,
    });
    expect(Object.keys(grouped).sort()).toEqual(['0', '1', '2']);
    for (const p of [0, 1, 2])
      expect(grouped[p]?.map((m) => m.key)).toEqual(
        messages.filter((m) => m.partition === p).map((m) => m.key),
      );
  });
});

describe('kafkajs as patched: a broker that refuses connections', () => {
  interface PoolBroker {
    isConnected(): boolean;
    connect(): Promise<void>;
    disconnect(): Promise<void>;
  }
  const BrokerPool = require('kafkajs/src/cluster/brokerPool.js') as new (options: object) => {
    brokers: Record<string, PoolBroker>;
    withBroker<T>(callback: (args: { nodeId: string }) => Promise<T>): Promise<T | null>;
  };
  const { KafkaJSConnectionError } = kafkajs;
  const quiet = { namespace: () => quiet, error() {}, warn() {}, info() {}, debug() {} };

  // Stand-ins for kafkajs's Broker (what BrokerPool calls of it): one crashed (its connect
  // refused, as a broker's port that nothing listens on), the others answering.
  const crashed = (): PoolBroker => ({
    isConnected: () => false,
    connect: () => Promise.reject(new KafkaJSConnectionError('Connection error: connect ECONNREFUSED')),
    disconnect: () => Promise.resolve(),
  });
  const answering = (): PoolBroker => ({
    isConnected: () => true,
    connect: () => Promise.resolve(),
    disconnect: () => Promise.resolve(),
  });
  const poolOf = (brokers: Record<string, PoolBroker>) => {
    const pool = new BrokerPool({ connectionPoolBuilder: {}, logger: quiet, retry: { retries: 0 } });
    pool.brokers = brokers;
    return pool;
  };

  it('regression: a crashed broker still in the metadata, tried first by the shuffle, failed the whole metadata request (a third of the starts of `run` with a broker of three just crashed: KAFKA_UNAVAILABLE); now the next broker answers', async () => {
    const pool = poolOf({ 1: answering(), 2: answering(), 3: crashed() });
    // The pool shuffles the brokers at every call: 30 calls try the crashed one first about ten times.
    const answeredBy = await Promise.all(
      Array.from({ length: 30 }, () => pool.withBroker(async ({ nodeId }) => nodeId)),
    );
    expect(new Set(answeredBy)).toEqual(new Set(['1', '2']));
  });

  it('still fails with the connection error when every broker refuses', async () => {
    const pool = poolOf({ 1: crashed(), 2: crashed() });
    await expect(pool.withBroker(async ({ nodeId }) => nodeId)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('fails with the connection error, which its callers retry, when the brokers that connected failed the request and another refused', async () => {
    const pool = poolOf({ 1: answering(), 2: crashed() });
    const failing = () => Promise.reject(new Error('NOT_COORDINATOR'));
    for (let i = 0; i < 10; i += 1) await expect(pool.withBroker(failing)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('returns null, as kafkajs does, when every broker connected and failed the request', async () => {
    const pool = poolOf({ 1: answering(), 2: answering() });
    expect(await pool.withBroker(() => Promise.reject(new Error('NOT_COORDINATOR')))).toBeNull();
  });
});

describe('kafkajs as patched: a transaction coordinator that moves', () => {
  interface EosManager {
    initProducerId(): Promise<void>;
    beginTransaction(): void;
    sendOffsets(args: object): Promise<void>;
    commit(): Promise<void>;
    abort(): Promise<void>;
  }
  const createEosManager = require('kafkajs/src/producer/eosManager/index.js') as (
    options: object,
  ) => EosManager;
  const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as {
    createErrorFromCode(code: number): Error;
  };
  const { KafkaJSConnectionError } = kafkajs;
  // What a request under way gets when its broker's socket closes (not in kafkajs's types).
  const { KafkaJSConnectionClosedError } = require('kafkajs/src/errors.js') as {
    KafkaJSConnectionClosedError: new (message: string) => Error;
  };
  const quiet = { namespace: () => quiet, error() {}, warn() {}, info() {}, debug() {} };
  const GROUP_COORDINATOR_NOT_AVAILABLE = 15;
  const NOT_COORDINATOR_FOR_GROUP = 16;
  const INVALID_PRODUCER_EPOCH = 47;

  type Call = { request: string; result?: boolean };
  /**
   * A stand-in for kafkajs's Broker as coordinator: fails a request with the error given for
   * it, once or `times` in a row.
   */
  const coordinator = (
    failures: {
      InitProducerId?: Error;
      AddOffsetsToTxn?: Error;
      TxnOffsetCommit?: Error | { error: Error; times: number };
      EndTxn?: Error;
    } = {},
  ) => {
    const calls: Call[] = [];
    const pending = new Map(
      Object.entries(failures).map(([request, failure]) => [
        request,
        failure instanceof Error ? { error: failure, times: 1 } : { ...failure },
      ]),
    );
    const answer = (call: Call) => {
      calls.push(call);
      const failure = pending.get(call.request);
      if (!failure) return Promise.resolve({});
      failure.times -= 1;
      if (failure.times === 0) pending.delete(call.request);
      state.failed = true;
      return Promise.reject(failure.error);
    };
    const state = {
      calls,
      failed: false,
      initProducerId: () =>
        answer({ request: 'InitProducerId' }).then(() => ({ producerId: 1, producerEpoch: 0 })),
      addOffsetsToTxn: () => answer({ request: 'AddOffsetsToTxn' }),
      txnOffsetCommit: () => answer({ request: 'TxnOffsetCommit' }),
      endTxn: ({ transactionResult }: { transactionResult: boolean }) =>
        answer({ request: 'EndTxn', result: transactionResult }),
    };
    return state;
  };
  /**
   * A transaction begun with `first` as the coordinator the cluster names; once `first` failed
   * a request (its broker killed, or the coordinator moved), the cluster names `successor`.
   * The producer hands the manager its retry settings; kafkajs's Cluster has none of its own.
   */
  const transactionWith = async (
    first: ReturnType<typeof coordinator>,
    successor = first,
    retry = { initialRetryTime: 1, maxRetryTime: 5, retries: 5 },
  ) => {
    const cluster = {
      refreshMetadataIfNecessary: () => Promise.resolve(),
      findGroupCoordinator: () => Promise.resolve(first.failed ? successor : first),
    };
    const manager = createEosManager({
      logger: quiet,
      cluster,
      retry,
      transactional: true,
      transactionalId: 'txn',
    });
    await manager.initProducerId();
    manager.beginTransaction();
    return manager;
  };
  const offsets = {
    consumerGroupId: 'group',
    topics: [{ topic: 'in', partitions: [{ partition: 0, offset: '1' }] }],
  };

  it('regression: the EndTxn under way when its coordinator’s broker was killed (connection closed) failed the transaction for good (TRANSACTION_FAILED, which ends `run`); now it is asked of the coordinator found anew', async () => {
    const killed = coordinator({ EndTxn: new KafkaJSConnectionClosedError('Closed connection') });
    const successor = coordinator();
    const manager = await transactionWith(killed, successor);
    await manager.sendOffsets(offsets);
    await expect(manager.commit()).resolves.toBeUndefined();
    expect(successor.calls.filter((c) => c.request === 'EndTxn')).toEqual([
      { request: 'EndTxn', result: true },
    ]);
  });

  it('asks AddOffsetsToTxn again of the new coordinator when the old one answers NOT_COORDINATOR', async () => {
    const moved = coordinator({ AddOffsetsToTxn: createErrorFromCode(NOT_COORDINATOR_FOR_GROUP) });
    const successor = coordinator();
    const manager = await transactionWith(moved, successor);
    await manager.sendOffsets(offsets);
    await manager.commit();
    expect(successor.calls.map((c) => c.request)).toEqual(['AddOffsetsToTxn', 'TxnOffsetCommit', 'EndTxn']);
  });

  it('starts a producer (InitProducerId) and commits offsets (TxnOffsetCommit) against the coordinator found anew when the connection was lost', async () => {
    const killed = coordinator({
      InitProducerId: new KafkaJSConnectionClosedError('Closed connection'),
      TxnOffsetCommit: new KafkaJSConnectionClosedError('Closed connection'),
    });
    const successor = coordinator();
    const manager = await transactionWith(killed, successor);
    await manager.sendOffsets(offsets);
    await manager.commit();
    expect(successor.calls.map((c) => c.request)).toEqual([
      'InitProducerId',
      'AddOffsetsToTxn',
      'TxnOffsetCommit',
      'EndTxn',
    ]);
  });

  it('aborts against the coordinator found anew too', async () => {
    const killed = coordinator({
      EndTxn: new KafkaJSConnectionError('Connection error: connect ECONNREFUSED'),
    });
    const successor = coordinator();
    const manager = await transactionWith(killed, successor);
    await manager.sendOffsets(offsets);
    await manager.abort();
    expect(successor.calls.filter((c) => c.request === 'EndTxn')).toEqual([
      { request: 'EndTxn', result: false },
    ]);
  });

  it("regression: a transaction's offset commit gave up after kafkajs's default 5 retries (about 9 s), whatever the client's retry settings, while a killed broker's group coordinator moved (TRANSACTION_FAILED, which ends `run`); now it retries as long as the producer's settings say", async () => {
    // More failures than kafkajs's default retries allow (5; 15 under NODE_ENV=test, as here).
    const unavailable = coordinator({
      TxnOffsetCommit: { error: createErrorFromCode(GROUP_COORDINATOR_NOT_AVAILABLE), times: 20 },
    });
    const manager = await transactionWith(unavailable, unavailable, {
      initialRetryTime: 1,
      maxRetryTime: 5,
      retries: 25,
    });
    await manager.sendOffsets(offsets);
    await manager.commit();
    expect(unavailable.calls.filter((c) => c.request === 'TxnOffsetCommit')).toHaveLength(21);
  });

  it('does not ask again when the producer was fenced', async () => {
    const fenced = createErrorFromCode(INVALID_PRODUCER_EPOCH);
    const fencing = coordinator({ EndTxn: fenced });
    const manager = await transactionWith(fencing, coordinator());
    await manager.sendOffsets(offsets);
    await expect(manager.commit()).rejects.toBe(fenced);
    expect(fencing.calls.map((c) => c.request)).toEqual([
      'InitProducerId',
      'AddOffsetsToTxn',
      'TxnOffsetCommit',
      'EndTxn',
    ]);
  });
});
