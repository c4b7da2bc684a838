import { createHash } from 'node:crypto';
import { Option, type Command } from 'commander';
import type { IHeaders, Kafka, KafkaMessage } from 'kafkajs';
import { assertTopicsExist } from '../../kafka/topic-presence.ts';
import { KafkaError } from '../../kafka/errors.ts';
import { batchOfOneSize, recordSize, requestsWithin } from '../../kafka/record-size.ts';
import { topicLimits } from '../../kafka/topic-limits.ts';
import { TopicReaders } from '../../kafka/topic-reader.ts';
import { partnerIdOfKey } from '../../serde/partner-decoders.ts';
import { FAILURE_STAGES, isPipelineHeader, VALUE_DROPPED_HEADER } from '../../pipeline/outputs.ts';
import { reachableKafka } from '../enrichment.ts';
import { reportFailure } from '../failure.ts';
import { isoTime } from '../option-parsers.ts';
import { commandConfig } from '../options.ts';

interface ReplayOptions {
  stage?: string;
  code?: string;
  partner?: string;
  /** Epoch ms. */
  since?: number;
  /** The topic the dead letters' records were read from; topics.input when absent. */
  originTopic?: string;
  dryRun?: boolean;
}

const header = (message: KafkaMessage, name: string): string | undefined =>
  message.headers?.[name]?.toString();

/** The input record's own headers a dead letter carries: all but the pipeline's `pe.*`. */
const originalHeaders = (message: KafkaMessage): IHeaders =>
  Object.fromEntries(Object.entries(message.headers ?? {}).filter(([name]) => !isPipelineHeader(name)));

/** Which dead letters a replay's filters take: every given filter must hold. */
export function deadLetterFilter(options: ReplayOptions): (message: KafkaMessage) => boolean {
  const { since } = options;
  return (message) =>
    (options.stage === undefined || header(message, 'pe.stage') === options.stage) &&
    (options.code === undefined || header(message, 'pe.error.code') === options.code) &&
    (options.partner === undefined ||
      (message.key !== null && partnerIdOfKey(message.key) === options.partner)) &&
    (since === undefined || Date.parse(header(message, 'pe.failed-at') ?? '') >= since);
}

/** A dead letter without the original bytes (too large to keep): its replay would publish an empty value. */
export const bytesDropped = (message: KafkaMessage): boolean =>
  header(message, VALUE_DROPPED_HEADER) !== undefined;

/**
 * A dead letter as the replay decides on it: without its bytes, which are read again when it
 * is sent. Holding every matching dead letter whole, 100,000 of 2 KB took 677 MB, more than a
 * replica's pod, where OPERATIONS runs the command, is given.
 */
interface Letter {
  /** Its key and headers, copied out of the fetch's buffers (a slice would keep them whole); no value. */
  message: KafkaMessage;
  /** The dead letter's own partition of the dead-letter topic. */
  partition: number;
  /** A hash of its key and bytes: with its origin, the input record it stands for (inputRecord). */
  digest: string;
  /** Its copy as a record batch of one, in bytes. */
  bytes: number;
}

const copied = (value: Buffer | string): Buffer | string =>
  Buffer.isBuffer(value) ? Buffer.from(value) : value;

function letterOf(message: KafkaMessage, partition: number, deadLetters: string): Letter {
  const digest = createHash('sha256')
    .update(message.key ?? '')
    .update('\0')
    .update(message.value ?? '')
    .digest('base64');
  const position = `${deadLetters}:${partition}:${message.offset}`;
  const headers = Object.fromEntries(
    Object.entries(message.headers ?? {}).map(([name, value]) => [
      name,
      Array.isArray(value) ? value.map(copied) : value === undefined ? value : copied(value),
    ]),
  );
  return {
    message: {
      ...message,
      key: message.key && Buffer.from(message.key),
      value: null,
      headers,
    } as KafkaMessage,
    partition,
    digest,
    bytes: batchOfOneSize(recordSize(copyOf(message, position))),
  };
}

/**
 * The record a dead letter stands for, as replayed: its key, bytes and own headers, and
 * `pe.replayed-from` naming the dead letter (its origin is in its pe.origin.* headers).
 */
const copyOf = (message: KafkaMessage, position: string, partition?: number) => ({
  key: message.key,
  value: message.value,
  headers: { ...originalHeaders(message), 'pe.replayed-from': position },
  ...(partition === undefined ? {} : { partition }),
});

/**
 * A partner's key: the input is keyed by partner id, so an empty key names no partner (its
 * record failed as MAPPING_MISSING_PARTNER_ID), like no key at all; taken as one, every
 * keyless record was the newer record of every other.
 */
const partnerKey = (message: KafkaMessage): Buffer | undefined =>
  message.key && message.key.length > 0 ? message.key : undefined;

/** Where the dead letter's record was read, when that is the input topic and it had a partner's key. */
function inputOrigin(
  message: KafkaMessage,
  input: string,
): { partition: number; offset: bigint } | undefined {
  const partition = Number(header(message, 'pe.origin.partition'));
  const offset = header(message, 'pe.origin.offset');
  if (header(message, 'pe.origin.topic') !== input || !partnerKey(message) || !Number.isInteger(partition))
    return undefined;
  if (offset === undefined || !/^\d+$/.test(offset)) return undefined;
  return { partition, offset: BigInt(offset) };
}

/** The input partition a dead letter's record was read from, when the input has it still. */
function originPartition(message: KafkaMessage, input: string, partitions: number): number | undefined {
  const partition = Number(header(message, 'pe.origin.partition'));
  if (header(message, 'pe.origin.topic') !== input || !Number.isInteger(partition)) return undefined;
  return partition >= 0 && partition < partitions ? partition : undefined;
}

async function partitionCount(kafka: Kafka, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    return topics[0]?.partitions.length ?? 0;
  } finally {
    await admin.disconnect();
  }
}

/** Where a dead letter is: the name its replayed copies carry in `pe.replayed-from`. */
const letterPosition = (
  deadLetters: string,
  { message, partition }: Pick<Letter, 'message' | 'partition'>,
): string => `${deadLetters}:${partition}:${message.offset}`;

/**
 * The input record a dead letter stands for: where it was read (`pe.origin.*`), its key and its
 * bytes (a dead letter names its origin only by topic name, which two clusters can share).
 * Undefined when the headers do not say where.
 */
function inputRecord({ message, digest }: Letter): string | undefined {
  const [topic, partition, offset] = ['topic', 'partition', 'offset'].map((part) =>
    header(message, `pe.origin.${part}`),
  );
  if (!topic || !partition || !offset) return undefined;
  return `${topic}:${partition}:${offset}:${digest}`;
}

/**
 * Those of `letters` that repeat another one's input record (inputRecord): a kill after a
 * dead letter was written and before its record's position was committed writes it again when
 * the record is read again (docs/GUARANTEES.md, duplicates). One replay per input record: the
 * first of them by position, and none when one of them was replayed before (`superseded`).
 */
function repeatedLetters(letters: Letter[], superseded: ReadonlySet<Letter>): Set<Letter> {
  const byRecord = new Map<string, Letter[]>();
  for (const letter of letters) {
    const record = inputRecord(letter);
    if (record === undefined) continue;
    const twins = byRecord.get(record);
    if (twins) twins.push(letter);
    else byRecord.set(record, [letter]);
  }
  const repeated = new Set<Letter>();
  for (const twins of byRecord.values()) {
    if (twins.length < 2) continue;
    twins.sort(
      (a, b) => a.partition - b.partition || Number(BigInt(a.message.offset) - BigInt(b.message.offset)),
    );
    const replayed = twins.some((letter) => superseded.has(letter));
    for (const [i, letter] of twins.entries())
      if ((replayed || i > 0) && !superseded.has(letter)) repeated.add(letter);
  }
  return repeated;
}

/**
 * The dead letters whose partner has a newer record on the input topic than the one that
 * failed: a later version, a tombstone, or the dead letter's own earlier replay. Re-publishing
 * such a record would put the partner back to older content (or bring a deleted partner
 * back), and a replay run again would send its records twice. Input partition by partition,
 * from the oldest origin on: the input is keyed by partner, so a partner's records share
 * their partition. Every dead letter's own replayed copy, named by `pe.replayed-from`, is
 * looked for too: a dead letter without a partner's key on the input (no partner id, or read
 * from another topic) has no newer record to be known by, and a copy can sit before its
 * origin (the input topic made anew since the record failed, its offsets from 0 again).
 */
export async function supersededLetters(
  readers: TopicReaders,
  topics: { input: string; deadLetters: string },
  letters: Letter[],
): Promise<Set<Letter>> {
  const { input } = topics;
  const from = new Map<number, bigint>();
  for (const letter of letters) {
    const origin = inputOrigin(letter.message, input);
    if (!origin) continue;
    const start = from.get(origin.partition);
    if (start === undefined || origin.offset + 1n < start) from.set(origin.partition, origin.offset + 1n);
  }
  const byPosition = new Map(letters.map((letter) => [letterPosition(topics.deadLetters, letter), letter]));
  const superseded = await replayedLetters(readers, input, byPosition);
  if (from.size === 0) return superseded;
  const newest = new Map<string, bigint>();
  const slot = (partition: number, key: Buffer) => `${partition}/${key.toString('base64')}`;
  await readers.readToEnd(
    input,
    (message, partition) => {
      const key = partnerKey(message);
      if (key) newest.set(slot(partition, key), BigInt(message.offset));
    },
    from,
  );
  for (const letter of letters) {
    const origin = inputOrigin(letter.message, input);
    const latest = origin && newest.get(slot(origin.partition, partnerKey(letter.message) as Buffer));
    if (origin && latest !== undefined && latest > origin.offset) superseded.add(letter);
  }
  return superseded;
}

/**
 * Those of `letters` (by position) a replay has re-published: the input topic read from the
 * oldest dead letter's time on, as no copy can be older than its dead letter. Without a key a
 * copy may be in any partition.
 */
async function replayedLetters(
  readers: TopicReaders,
  input: string,
  letters: ReadonlyMap<string, Letter>,
): Promise<Set<Letter>> {
  const replayed = new Set<Letter>();
  if (letters.size === 0) return replayed;
  const times = [...letters.values()].map(({ message }) => Number(message.timestamp));
  const since = Math.max(0, Math.min(...times.map((time) => (Number.isFinite(time) ? time : 0))));
  const admin = readers.kafka.admin();
  await admin.connect();
  let from: Map<number, bigint>;
  try {
    const offsets = await admin.fetchTopicOffsetsByTimestamp(input, since);
    from = new Map(
      offsets.filter(({ offset }) => BigInt(offset) >= 0n).map((p) => [p.partition, BigInt(p.offset)]),
    );
  } finally {
    await admin.disconnect();
  }
  await readers.readToEnd(
    input,
    (message) => {
      const copied = letters.get(header(message, 'pe.replayed-from') ?? '');
      if (copied) replayed.add(copied);
    },
    from,
  );
  return replayed;
}

/** Copies at most this many bytes are held before they are sent. */
const SEND_EVERY_BYTES = 8 * 2 ** 20;

/**
 * Reads the chosen dead letters again and sends their copies, a few megabytes at a time, each
 * to the input partition its record was read from; resolves with how many were sent. One gone
 * meanwhile (the topic's retention) is not sent.
 */
async function sendCopies(
  readers: TopicReaders,
  topics: { input: string; deadLetters: string },
  chosen: Letter[],
  limit: number,
  inputPartitions: number,
): Promise<number> {
  const wanted = new Set(chosen.map((letter) => letterPosition(topics.deadLetters, letter)));
  const from = new Map<number, bigint>();
  for (const { partition, message } of chosen) {
    const offset = BigInt(message.offset);
    if ((from.get(partition) ?? offset + 1n) > offset) from.set(partition, offset);
  }
  const producer = readers.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  let pending: ReturnType<typeof copyOf>[] = [];
  let pendingBytes = 0;
  let sent = 0;
  const flush = async () => {
    // In one request the broker refused every partition whose letters added up to more than
    // the input topic takes (MESSAGE_TOO_LARGE), after the other partitions' were written.
    for (const request of requestsWithin(pending, limit))
      await producer.send({ topic: topics.input, acks: -1, messages: request });
    sent += pending.length;
    pending = [];
    pendingBytes = 0;
  };
  try {
    await readers.readToEnd(
      topics.deadLetters,
      async (message, partition) => {
        const position = letterPosition(topics.deadLetters, { message, partition });
        if (!wanted.has(position)) return;
        // Back to the record's own partition, where its partner's state is kept: placed by this
        // client's partitioner, a record its producer placed otherwise (librdkafka's, or by
        // hand) went elsewhere, its partner announced Created again there.
        const copy = copyOf(message, position, originPartition(message, topics.input, inputPartitions));
        pending.push(copy);
        pendingBytes += recordSize(copy);
        if (pendingBytes >= SEND_EVERY_BYTES) await flush();
      },
      from,
    );
    await flush();
  } finally {
    await producer.disconnect();
  }
  return sent;
}

export function registerDlqReplay(program: Command): void {
  const dlq =
    program.commands.find((c) => c.name() === 'dlq') ?? program.command('dlq').description('dead letters');
  dlq
    .command('replay')
    .description(
      're-publish dead letters (original key and bytes) to the input topic, into the partition each was read from, e.g. after fixing the mapping or the data; ' +
        'the dead-letter topic is left as it is; dead letters whose bytes were too large to keep (pe.value-dropped) are left out and counted, ' +
        'and so are those whose partner has a newer record on the input topic (a later version or tombstone, or an earlier replay), ' +
        'and all but one of the dead letters of one input record (a restart can write one twice); ' +
        "one larger than the input topic's max.message.bytes is not sent: each is named on stderr (REPLAY_RECORD_TOO_LARGE) " +
        'and the command exits 2 once the others are sent (with --dry-run too)',
    )
    .addOption(new Option('--stage <stage>', 'only dead letters of this stage').choices(FAILURE_STAGES))
    .option('--code <code>', 'only dead letters with this error code, e.g. TASK_FAILED')
    .option(
      '--partner <id>',
      "only dead letters with this partner id as key (the key's text, or the Avro string of a key in the schema registry's wire format)",
    )
    .option(
      '--since <time>',
      'only dead letters that failed at or after this ISO 8601 time',
      isoTime('--since'),
    )
    .option(
      '--origin-topic <topic>',
      'only dead letters of records read from this topic (default topics.input; the dead-letter topic may be shared by other pipelines): name the former input topic to replay its dead letters after a rename',
    )
    .option('--dry-run', 'count what would be replayed, by stage and code, without publishing')
    .action(async (options: ReplayOptions, command: Command) => {
      const config = commandConfig(command, {}, true);
      const kafka = await reachableKafka(config);
      // kafkajs asks for an unknown topic's metadata again for about 80 s before it fails.
      await assertTopicsExist(kafka, [config.topics.deadLetters, config.topics.input]);
      const take = deadLetterFilter(options);
      const matching: Letter[] = [];
      let dropped = 0;
      const readers = new TopicReaders(kafka, config.kafka.readerGroupPrefix);
      const seen = await readers.readToEnd(config.topics.deadLetters, (message, partition) => {
        if (!take(message)) return;
        if (bytesDropped(message)) dropped += 1;
        else matching.push(letterOf(message, partition, config.topics.deadLetters));
      });
      // A dead-letter topic may be shared by pipelines of other input topics: their dead letters
      // replayed here were looked up and stored by this pipeline (a partner Created here, a
      // lookup paid). Those of a former input topic are replayed when it is named.
      const origin = options.originTopic ?? config.topics.input;
      const elsewhere = new Map<string, number>();
      const fromOrigin = matching.filter((letter) => {
        const topic = header(letter.message, 'pe.origin.topic') ?? '(none)';
        if (topic !== origin) elsewhere.set(topic, (elsewhere.get(topic) ?? 0) + 1);
        return topic === origin;
      });
      const superseded = await supersededLetters(readers, config.topics, fromOrigin);
      const repeated = repeatedLetters(fromOrigin, superseded);
      const replayable = fromOrigin.filter((letter) => !superseded.has(letter) && !repeated.has(letter));
      // The broker refuses a batch over the input topic's limit, and a copy over it alone fits in
      // no request: sent, it failed the command half done.
      const limit = (await topicLimits(kafka, [config.topics.input])).get(config.topics.input) as number;
      const tooLarge = replayable.filter(({ bytes }) => bytes > limit);
      const chosen = replayable.filter(({ bytes }) => bytes <= limit);
      const byReason = new Map<string, number>();
      for (const { message: m } of chosen) {
        const reason = `${header(m, 'pe.stage')}/${header(m, 'pe.error.code')}`;
        byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
      }
      console.log(`${matching.length + dropped} of ${seen} dead letters match`);
      if (dropped > 0)
        console.log(
          `  ${dropped} left out: the record's bytes were too large to keep in the dead letter (pe.value-dropped); send it again from its source`,
        );
      if (elsewhere.size > 0) {
        const topics = [...elsewhere].map(([topic, count]) => `${topic}: ${count}`).join(', ');
        console.log(
          `  ${matching.length - fromOrigin.length} left out: read from another topic (${topics}); --origin-topic names the one to replay`,
        );
      }
      if (superseded.size > 0)
        console.log(
          `  ${superseded.size} left out: their partner has a newer input record (a later version, a tombstone or an earlier replay), or they were replayed before`,
        );
      if (repeated.size > 0)
        console.log(
          `  ${repeated.size} left out: another dead letter of the same input record is replayed, or was (a restart wrote it twice)`,
        );
      if (tooLarge.length > 0)
        console.log(
          `  ${tooLarge.length} left out: larger than the input topic takes (max.message.bytes ${limit}), named on stderr`,
        );
      for (const [reason, count] of byReason) console.log(`  ${reason}: ${count}`);
      for (const letter of tooLarge) {
        const { bytes } = letter;
        const position = letterPosition(config.topics.deadLetters, letter);
        process.exitCode = reportFailure(
          new KafkaError(
            'REPLAY_RECORD_TOO_LARGE',
            `dead letter ${position} takes ${bytes} bytes as a record batch, more than the input topic ` +
              `${config.topics.input} takes (max.message.bytes ${limit}): not replayed`,
            { details: { deadLetter: position, bytes, limit } },
          ),
        );
      }
      if (options.dryRun || chosen.length === 0) return;
      const sent = await sendCopies(
        readers,
        config.topics,
        chosen,
        limit,
        await partitionCount(kafka, config.topics.input),
      );
      console.log(`replayed ${sent} records to ${config.topics.input}`);
    });
}
