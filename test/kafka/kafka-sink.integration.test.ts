// The Kafka sink against the real broker, on output topics that accept at most 64 KiB per
// record batch (max.message.bytes): batches are split under the limit, a message that can
// never fit fails alone, and each key's order survives the split.
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type AdminConfig, type KafkaMessage } from 'kafkajs';
import { freePort } from '../../deploy/local/processes.ts';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { BulkTaskResult } from '../../src/bulk/bulk-api.ts';
import { registerTopicEncoder } from '../../src/kafka/avro-encoder.ts';
import { installCompressionCodecs } from '../../src/kafka/compression-codecs.ts';
import { compressedLimit } from '../../src/kafka/output-compression.ts';
import { KafkaSink, type KafkaSinkOptions } from '../../src/kafka/kafka-sink.ts';
import {
  matchedOutputs,
  withoutValue,
  type OutputMessage,
  type OutputName,
} from '../../src/pipeline/outputs.ts';
import type { PartnerWork } from '../../src/pipeline/records.ts';
import { readAll } from '../support/enrichment.ts';
import {
  batchCodecs,
  eventually,
  kafkaClient,
  setTopicConfig,
  setTopicLimit,
  uniqueName,
  withTopics,
} from '../support/kafka.ts';
import { deleteSubject } from '../support/schema-registry.ts';

const LIMIT = 64 * 1024;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

interface Outputs {
  kafka: Kafka;
  topics: Record<OutputName, string>;
  encoders: KafkaSinkOptions['encoders'];
  sink(options?: Partial<KafkaSinkOptions>): Promise<KafkaSink>;
}

/** Four output topics of 3 partitions and 64 KiB max.message.bytes, with their Avro encoders. */
async function outputs(): Promise<Outputs> {
  const kafka = kafkaClient();
  const base = uniqueName('sink');
  const topics: Record<OutputName, string> = {
    matches: `${base}.matches`,
    events: `${base}.events`,
    storage: `${base}.storage`,
    deadLetters: `${base}.dlq`,
  };
  const { cleanup } = await withTopics(
    kafka,
    Object.values(topics).map((topic) => ({
      topic,
      numPartitions: 3,
      configEntries: [{ name: 'max.message.bytes', value: String(LIMIT) }],
    })),
  );
  const registry = { url: inject('schemaRegistryUrl') };
  const [matches, events, storage] = await Promise.all([
    registerTopicEncoder(registry, topics.matches, 'MatchResult'),
    registerTopicEncoder(registry, topics.events, 'BusinessPartnerEvent'),
    registerTopicEncoder(registry, topics.storage, 'StorageRecord'),
  ]);
  cleanups.push(async () => {
    await cleanup();
    for (const t of [topics.matches, topics.events, topics.storage]) await deleteSubject(`${t}-value`);
  });
  const encoders = { matches, events, storage };
  return {
    kafka,
    topics,
    encoders,
    async sink(options = {}) {
      const sink = new KafkaSink(kafka, { topics, encoders, ...options });
      await sink.connect();
      cleanups.unshift(() => sink.close());
      return sink;
    },
  };
}

/** A dead letter of `bytes` bytes whose value starts with `label`. */
const deadLetter = (key: string, label: string, bytes: number): OutputMessage => ({
  output: 'deadLetters',
  key,
  value: Buffer.concat([Buffer.from(`${label}|`), Buffer.alloc(bytes - label.length - 1, 'x')]),
  headers: { 'pe.stage': 'lookup', 'pe.error.code': 'TASK_FAILED' },
});

const label = (message: KafkaMessage): string => (message.value?.toString() ?? '').split('|')[0] as string;

/** Whether the sink's check takes `message` (it throws OUTPUT_TOO_LARGE for one over its topic's limit). */
function fits(sink: KafkaSink, message: OutputMessage): boolean {
  try {
    sink.check([message]);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === 'OUTPUT_TOO_LARGE') return false;
    throw error;
  }
}

/** The messages of one finished lookup (MatchResult, Created event, storage record), built as the pipeline builds them. */
function matchMessages(partnerId: string): OutputMessage[] {
  const work: PartnerWork = {
    id: 'w-1',
    partnerId,
    kind: 'lookup',
    records: [
      {
        input: {
          position: { topic: 'partners', partition: 0, offset: 1 },
          key: Buffer.from(partnerId),
          value: Buffer.from('{}'),
          headers: {},
          timestamp: 0,
        },
        partner: {
          partnerId,
          sourceSystem: 'ERP',
          names: ['Muster GmbH'],
          legalForm: null,
          addresses: [],
          identifiers: [],
          taxNumbers: [],
          changedAt: 1,
        },
      },
    ],
    hash: 'h1',
    state: 'submitted',
    attempts: 1,
    epoch: 1,
  };
  const result: BulkTaskResult = { taskId: 't', status: 'OK', candidates: [{ svcId: 'SVC-1', score: 0.95 }] };
  return matchedOutputs(
    work,
    result,
    'bulk-1',
    undefined,
    { fullMatch: 0.9, maybeMatch: 0.7 },
    {
      storageId: 'storage',
      now: () => 1,
    },
  ).messages;
}

describe('Kafka sink on topics with a 64 KiB max.message.bytes', () => {
  it('regression: an output batch over the broker max message size (four ~20 KB dead letters with one key) is split and all written', async () => {
    const out = await outputs();
    const sink = await out.sink();
    const letters = ['a', 'b', 'c', 'd'].map((l) => deadLetter('P-1', l, 20_000));
    await sink.send(letters);
    const written = await readAll(out.kafka, out.topics.deadLetters);
    expect(written.map(label)).toEqual(['a', 'b', 'c', 'd']);
    expect(written.every((m) => m.key?.toString() === 'P-1' && m.value?.length === 20_000)).toBe(true);
  });

  it('regression: a message that can never fit rejects only its own send (OUTPUT_TOO_LARGE), concurrent sends are written', async () => {
    const out = await outputs();
    const sink = await out.sink();
    const [oversize, matched, small] = await Promise.allSettled([
      sink.send([deadLetter('P-1', 'huge', LIMIT)]),
      sink.send(matchMessages('P-2')),
      sink.send([deadLetter('P-3', 'small', 1_000)]),
    ]);
    expect(oversize.status).toBe('rejected');
    expect((oversize as PromiseRejectedResult).reason).toMatchObject({
      code: 'OUTPUT_TOO_LARGE',
      canRetry: false,
      details: { output: 'deadLetters', topic: out.topics.deadLetters, limit: LIMIT },
    });
    expect(
      ((oversize as PromiseRejectedResult).reason as { details: { bytes: number } }).details.bytes,
    ).toBeGreaterThan(LIMIT);
    expect([matched.status, small.status]).toEqual(['fulfilled', 'fulfilled']);
    expect((await readAll(out.kafka, out.topics.deadLetters)).map(label)).toEqual(['small']);
    const counts = await Promise.all(
      [out.topics.matches, out.topics.events, out.topics.storage].map(
        async (t) => (await readAll(out.kafka, t)).length,
      ),
    );
    expect(counts).toEqual([1, 1, 1]);
  });

  it('regression: order per key is preserved across split batches, whichever call and flush a message came in', async () => {
    const out = await outputs();
    const keys = ['K-1', 'K-2', 'K-3', 'K-4', 'K-5'];
    const perKey = 40;
    // 200 messages of 5 KB: about 1 MB, in one-message and three-message calls spread over many flushes.
    const sink = await out.sink();
    const sends: Promise<void>[] = [];
    const sent = new Map<string, string[]>(keys.map((k) => [k, []]));
    for (let i = 0; i < perKey; i++) {
      for (const key of keys) {
        const batch = i % 4 === 0 ? [0, 1, 2].map((j) => `${i}.${j}`) : [`${i}`];
        sent.get(key)?.push(...batch);
        sends.push(sink.send(batch.map((l) => deadLetter(key, l, 5_000))));
      }
      if (i % 5 === 0) await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await Promise.all(sends);
    const written = await readAll(out.kafka, out.topics.deadLetters);
    const read = new Map<string, string[]>(keys.map((k) => [k, []]));
    for (const m of written) read.get(m.key?.toString() ?? '')?.push(label(m));
    expect(read).toEqual(sent);
  });

  it('writes sends that each wait for the previous one (a send made as the last request settles is not stranded)', async () => {
    const out = await outputs();
    const sink = await out.sink();
    for (const l of ['a', 'b', 'c']) await sink.send([deadLetter('P-1', l, 1_000)]);
    expect((await readAll(out.kafka, out.topics.deadLetters)).map(label)).toEqual(['a', 'b', 'c']);
  });

  it('writes a dead letter whose original bytes are over the limit once its value is dropped (withoutValue)', async () => {
    const out = await outputs();
    const sink = await out.sink();
    const letter = deadLetter('P-1', 'huge', 2 * LIMIT);
    await expect(sink.send([letter])).rejects.toMatchObject({
      code: 'OUTPUT_TOO_LARGE',
      details: { output: 'deadLetters' },
    });
    await sink.send([withoutValue(letter)]);
    const [written] = await readAll(out.kafka, out.topics.deadLetters);
    expect(written?.value?.length).toBe(0);
    expect(written?.headers?.['pe.value-dropped']?.toString()).toBe(String(2 * LIMIT));
    expect(written?.headers?.['pe.error.code']?.toString()).toBe('TASK_FAILED');
  });

  it("regression: a message up to about 15 bytes under its topic's limit was refused as OUTPUT_TOO_LARGE though the broker takes it (its size counted the record's deltas at their largest); the largest message the sink takes is the largest the broker takes", async () => {
    const out = await outputs();
    const sink = await out.sink();
    const at = (bytes: number) => deadLetter('P-1', `edge${bytes}`, bytes);
    // The broker's own answer, through a plain producer: a batch of one message of this size.
    const producer = out.kafka.producer();
    await producer.connect();
    cleanups.unshift(() => producer.disconnect());
    const brokerTakes = async (bytes: number): Promise<boolean> => {
      const { key, value, headers } = at(bytes);
      try {
        await producer.send({
          topic: out.topics.deadLetters,
          acks: -1,
          messages: [{ key: key as string, value: value as Buffer, headers: headers ?? {} }],
        });
        return true;
      } catch (error) {
        if ((error as { type?: string }).type === 'MESSAGE_TOO_LARGE') return false;
        throw error;
      }
    };
    let [taken, refused] = [LIMIT - 1_000, LIMIT];
    expect(await brokerTakes(taken)).toBe(true);
    expect(await brokerTakes(refused)).toBe(false);
    while (refused - taken > 1) {
      const middle = Math.floor((taken + refused) / 2);
      if (await brokerTakes(middle)) taken = middle;
      else refused = middle;
    }
    expect(fits(sink, at(taken))).toBe(true);
    expect(fits(sink, at(taken + 1))).toBe(false);
    await sink.send([at(taken)]);
    expect((await readAll(out.kafka, out.topics.deadLetters)).map(label)).toContain(`edge${taken}`);
  });

  it("regression: a topic's limit lowered after connect: the broker's refusal says so (OUTPUT_REFUSED_AS_TOO_LARGE, it was kafkajs's MESSAGE_TOO_LARGE), a sink connected anew refuses the message itself", async () => {
    const out = await outputs();
    const sink = await out.sink();
    await setTopicLimit(out.kafka, out.topics.deadLetters, 16 * 1024);
    const error = await sink.send([deadLetter('P-1', 'mid', 20_000)]).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'OUTPUT_REFUSED_AS_TOO_LARGE',
      canRetry: false,
      details: { limits: { [out.topics.deadLetters]: LIMIT } },
    });
    expect((error as Error).message).toContain(out.topics.deadLetters);
    const restarted = await out.sink();
    await expect(restarted.send([deadLetter('P-1', 'mid', 20_000)])).rejects.toMatchObject({
      code: 'OUTPUT_TOO_LARGE',
      details: { limit: 16 * 1024 },
    });
    expect(await readAll(out.kafka, out.topics.deadLetters)).toEqual([]);
  });

  it("regression: a topic's limit raised while running was not seen until a restart (an OUTPUT_TOO_LARGE replayed was refused again): it is written once the sink read the limits again", async () => {
    const out = await outputs();
    await setTopicLimit(out.kafka, out.topics.deadLetters, 16 * 1024);
    const sink = await out.sink({ limitsEveryMs: 200 });
    const letter = deadLetter('P-1', 'mid', 20_000);
    await expect(sink.send([letter])).rejects.toMatchObject({
      code: 'OUTPUT_TOO_LARGE',
      details: { limit: 16 * 1024 },
    });
    await setTopicLimit(out.kafka, out.topics.deadLetters, LIMIT);
    // The output writer's check before a lookup is paid: it takes the letter once the limit is read.
    await eventually(() => fits(sink, letter), 10_000, 'the letter taken under the raised limit');
    expect(sink.smallestLimit()).toBe(LIMIT);
    await sink.send([letter]);
    expect((await readAll(out.kafka, out.topics.deadLetters)).map(label)).toEqual(['mid']);
  });

  it("regression: a topic's limit lowered while running made the broker refuse the next batch (fatal): once read again, batches are cut to it and a message over it is OUTPUT_TOO_LARGE alone", async () => {
    const out = await outputs();
    const sink = await out.sink({ limitsEveryMs: 200 });
    await setTopicLimit(out.kafka, out.topics.deadLetters, 16 * 1024);
    const mid = deadLetter('P-1', 'mid', 20_000);
    await eventually(() => !fits(sink, mid), 10_000, 'the letter refused under the lowered limit');
    const [over, under] = await Promise.allSettled([
      sink.send([mid]),
      sink.send(['a', 'b', 'c'].map((l) => deadLetter('P-2', l, 10_000))),
    ]);
    expect(over).toMatchObject({
      status: 'rejected',
      reason: { code: 'OUTPUT_TOO_LARGE', details: { limit: 16 * 1024 } },
    });
    expect(under.status).toBe('fulfilled');
    expect((await readAll(out.kafka, out.topics.deadLetters)).map(label)).toEqual(['a', 'b', 'c']);
  });

  it('keeps the limits it has while a read of them fails (no broker answering), and takes the next one read', async () => {
    const out = await outputs();
    // The sink's producer writes to the broker; its reads of the limits go nowhere while `away`.
    const nowhere = new Kafka({
      brokers: [`127.0.0.1:${await freePort()}`],
      logLevel: logLevel.NOTHING,
      // Refused at once instead of after the client's retries (about 8 s a read).
      retry: { retries: 0 },
    });
    let away = false;
    let readsAway = 0;
    const kafka: Kafka = Object.create(out.kafka, {
      admin: {
        value: (config?: AdminConfig) => {
          if (!away) return out.kafka.admin(config);
          readsAway += 1;
          return nowhere.admin(config);
        },
      },
    });
    const sink = new KafkaSink(kafka, { topics: out.topics, encoders: out.encoders, limitsEveryMs: 100 });
    await sink.connect();
    cleanups.unshift(() => sink.close());
    away = true;
    await setTopicLimit(out.kafka, out.topics.deadLetters, 16 * 1024);
    await eventually(() => readsAway >= 3, 20_000, 'three reads while no broker answers');
    expect(sink.limit(out.topics.deadLetters)).toBe(LIMIT);
    await sink.send([deadLetter('P-1', 'small', 1_000)]);
    expect((await readAll(out.kafka, out.topics.deadLetters)).map(label)).toEqual(['small']);
    away = false;
    await eventually(() => sink.limit(out.topics.deadLetters) === 16 * 1024, 10_000, 'the limit read again');
  });

  it('takes an explicit record batch limit instead of the topics own (maxMessageBytes)', async () => {
    const out = await outputs();
    const sink = await out.sink({ maxMessageBytes: 16 * 1024 });
    await expect(sink.send([deadLetter('P-1', 'mid', 20_000)])).rejects.toMatchObject({
      code: 'OUTPUT_TOO_LARGE',
      details: { limit: 16 * 1024 },
    });
    await sink.send(['a', 'b', 'c'].map((l) => deadLetter('P-1', l, 10_000)));
    expect((await readAll(out.kafka, out.topics.deadLetters)).map(label)).toEqual(['a', 'b', 'c']);
  });
});

describe('Kafka sink with kafka.compression', () => {
  beforeAll(installCompressionCodecs);

  it("regression: a dead letter of bytes that do not compress, just under its topic's limit, passed the sink's check and gzip made its batch larger: the broker refused it (OUTPUT_REFUSED_AS_TOO_LARGE, fatal, at every restart); now the check keeps the codec's margin", async () => {
    const out = await outputs();
    const plain = await out.sink();
    const gzip = await out.sink({ compression: 'gzip' });
    const noise = (bytes: number): OutputMessage => ({
      ...deadLetter('P-1', 'noise', 16),
      value: Buffer.concat([Buffer.from('noise|'), randomBytes(bytes - 6)]),
    });
    // The largest dead letter the check takes uncompressed: the most a batch of one may hold.
    let [taken, refused] = [LIMIT - 1_000, LIMIT];
    while (refused - taken > 1) {
      const middle = Math.floor((taken + refused) / 2);
      if (fits(plain, noise(middle))) taken = middle;
      else refused = middle;
    }
    // Before: the check took it, and the broker refused the batch (OUTPUT_REFUSED_AS_TOO_LARGE, fatal).
    await expect(gzip.send([noise(taken)])).rejects.toMatchObject({ code: 'OUTPUT_TOO_LARGE' });
    const margin = LIMIT - compressedLimit(LIMIT, 'gzip');
    await gzip.send([noise(taken - margin)]);
    expect((await readAll(out.kafka, out.topics.deadLetters)).map(label)).toContain('noise');
  });

  it.each(['gzip', 'snappy', 'lz4', 'zstd'] as const)(
    "writes %s-compressed record batches, which the broker keeps as they are, or decodes with Java's codecs to recompress for a topic of another compression.type: every message read back as sent",
    async (compression) => {
      const out = await outputs();
      await setTopicConfig(out.kafka, out.topics.storage, 'compression.type', 'gzip');
      const sink = await out.sink({ compression });
      await sink.send([
        ...matchMessages('P-1'),
        ...matchMessages('P-2'),
        ...['a', 'b', 'c'].map((l) => deadLetter('P-1', l, 10_000)),
      ]);
      let letters: KafkaMessage[] = [];
      const codecs = await batchCodecs(async () => {
        letters = await readAll(out.kafka, out.topics.deadLetters);
      });
      expect(codecs).toEqual(new Set([compression]));
      expect(letters.map(label)).toEqual(['a', 'b', 'c']);
      expect(letters[0]?.value?.length).toBe(10_000);
      let stored: KafkaMessage[] = [];
      const recompressed = await batchCodecs(async () => {
        stored = await readAll(out.kafka, out.topics.storage);
      });
      expect(recompressed).toEqual(new Set(['gzip']));
      expect(stored.map((m) => m.key?.toString())).toEqual(['P-1', 'P-2']);
    },
  );

  it('writes uncompressed batches by default', async () => {
    const out = await outputs();
    const sink = await out.sink();
    await sink.send([deadLetter('P-1', 'a', 10_000)]);
    expect(await batchCodecs(() => readAll(out.kafka, out.topics.deadLetters))).toEqual(new Set());
  });
});
