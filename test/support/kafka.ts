// Integration helpers: clients for the broker the global setup started, topics with
// random names that are always deleted afterwards.
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import kafkajs, { Kafka, logLevel, type Admin, type RetryOptions } from 'kafkajs';
import { inject } from 'vitest';
import type { Codec } from '../../src/kafka/compression-codecs.ts';
import { createTopicsWithLeaders } from '../../src/kafka/topics.ts';

export const uniqueName = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

/**
 * The tests' own client, also handed to the product's stores and sinks under test. Silent:
 * kafkajs's console logger printed a JSON line per request it retried or gave up on (a topic
 * deleted at cleanup under a follower, a fenced transaction a test provokes), noise in the
 * test output. What a test asserts on reaches it otherwise: the errors kafkajs throws, and the
 * product's log lines, which its own clients route into the project's logger (kafkajs-log.ts).
 */
export function kafkaClient(bootstrap = inject('kafkaBrokers')): Kafka {
  return new Kafka({
    clientId: uniqueName('test'),
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { retries: 8, initialRetryTime: 100 },
  });
}

/**
 * What a client of `wireClient` does with a request it is about to write (the whole request in
 * the buffer: its API key at byte 4, its version at 6, its correlation id at 8): send it, lose
 * the connection with it on it, or answer it with the given response instead of the broker.
 */
type WireFault = 'send' | 'lose' | Buffer;

/** A client whose requests pass `fault` on their way to the broker (WireFault). */
function wireClient(options: { fault: (request: Buffer) => WireFault; retry: RetryOptions }): Kafka {
  return new Kafka({
    clientId: uniqueName('wire'),
    brokers: [inject('kafkaBrokers')],
    logLevel: logLevel.NOTHING,
    retry: options.retry,
    socketFactory: ({ host, port, onConnect }) => {
      const socket: Socket = connect({ host, port }, onConnect);
      const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean;
      socket.write = ((chunk: unknown, ...rest: unknown[]) => {
        const fault = Buffer.isBuffer(chunk) ? options.fault(chunk) : 'send';
        if (fault === 'send') return write(chunk, ...rest);
        if (fault === 'lose') {
          socket.destroy(new Error('connection lost with the request on it'));
          return false;
        }
        setImmediate(() => socket.emit('data', fault));
        return true;
      }) as Socket['write'];
      return socket;
    },
  });
}

/**
 * A client whose connection is lost with each request `lost` picks on it (the socket destroyed
 * as the request is written): kafkajs sends it again after its retry's backoff (`retry`), as it
 * does while a broker is away.
 */
export function lossyKafkaClient(options: {
  lost: (request: Buffer) => boolean;
  retry: RetryOptions;
}): Kafka {
  return wireClient({
    retry: options.retry,
    fault: (request) => (options.lost(request) ? 'lose' : 'send'),
  });
}

/** Kafka's API key of a TxnOffsetCommit request (lossyKafkaClient). */
export const TXN_OFFSET_COMMIT_API_KEY = 28;
const FETCH_API_KEY = 1;

/**
 * A client whose fetches are lost once `brokerAway()` was called, as while a broker is away: a
 * consumer's fetch loop then waits its retry's backoff (`initialRetryTime` at the first)
 * before fetching again. `lost` counts the fetches lost.
 */
export function fetchLosingClient(initialRetryTime: number) {
  let away = false;
  let lost = 0;
  const kafka = lossyKafkaClient({
    retry: { retries: 8, initialRetryTime },
    lost: (request) => {
      if (!away || request.readInt16BE(4) !== FETCH_API_KEY) return false;
      lost += 1;
      return true;
    },
  });
  return {
    kafka,
    brokerAway: () => {
      away = true;
    },
    get lost() {
      return lost;
    },
  };
}

const LEAVE_GROUP_API_KEY = 13;
const NOT_COORDINATOR = 16;

/**
 * A client whose first `times` LeaveGroup requests are answered "not the coordinator" (error
 * 16) without reaching the broker, as a broker answers once the group's coordinator has moved
 * to another: the member is still in the group. `answered` counts those answers.
 */
export function coordinatorMovedClient(times: number) {
  let answered = 0;
  const kafka = wireClient({
    retry: { retries: 8, initialRetryTime: 100 },
    fault: (request) => {
      if (answered >= times || request.readInt16BE(4) !== LEAVE_GROUP_API_KEY) return 'send';
      answered += 1;
      return leaveGroupError(request.readInt16BE(6), request.readInt32BE(8), NOT_COORDINATOR);
    },
  });
  return {
    kafka,
    get answered() {
      return answered;
    },
  };
}

/** A LeaveGroup response (versions 0 to 3, those kafkajs asks) carrying only an error code. */
function leaveGroupError(version: number, correlationId: number, errorCode: number): Buffer {
  const throttle = version >= 1 ? 4 : 0;
  const members = version >= 3 ? 4 : 0; // an empty array
  const response = Buffer.alloc(4 + 4 + throttle + 2 + members);
  response.writeInt32BE(response.length - 4, 0);
  response.writeInt32BE(correlationId, 4);
  response.writeInt16BE(errorCode, 8 + throttle);
  return response;
}

/** Creates topics for one test and returns a function that deletes them again. */
export async function withTopics(
  kafka: Kafka,
  topics: { topic: string; numPartitions?: number; configEntries?: { name: string; value: string }[] }[],
): Promise<{ admin: Admin; cleanup: () => Promise<void> }> {
  const admin = kafka.admin();
  await admin.connect();
  await createTopicsWithLeaders(admin, topics);
  return {
    admin,
    cleanup: async () => {
      await admin.deleteTopics({ topics: topics.map((t) => t.topic) }).catch(() => {});
      await admin.disconnect();
    },
  };
}

/** Resolves once `predicate` holds, polling; rejects after `timeoutMs`. */
export async function eventually(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Sets one of a topic's configs, keeping its other overrides (alterConfigs replaces them all:
 * a compacted topic lost its cleanup.policy); resolves once the broker answers describeConfigs
 * with it (a moment after alterConfigs returns: a client reading it before gets the old one).
 */
export async function setTopicConfig(
  kafka: Kafka,
  topic: string,
  name: string,
  value: string,
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  const current = async (names?: string[]) =>
    (
      await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: 2, name: topic, ...(names ? { configNames: names } : {}) }],
      })
    ).resources[0]?.configEntries ?? [];
  try {
    const kept = (await current())
      .filter((e) => e.configSource === 1 && e.configName !== name)
      .map((e) => ({ name: e.configName, value: e.configValue }));
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: 2, name: topic, configEntries: [...kept, { name, value }] }],
    });
    while ((await current([name]))[0]?.configValue !== value)
      await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    await admin.disconnect();
  }
}

/** Sets a topic's max.message.bytes (setTopicConfig). */
export const setTopicLimit = (kafka: Kafka, topic: string, bytes: number): Promise<void> =>
  setTopicConfig(kafka, topic, 'max.message.bytes', String(bytes));

/**
 * The codecs of a topic's record batches as the broker keeps them, read to the end: the codecs
 * kafkajs's table is asked for while `read` runs (uncompressed batches ask for none).
 */
export async function batchCodecs(read: () => Promise<unknown>): Promise<Set<string>> {
  const table = kafkajs.CompressionCodecs as unknown as Record<number, () => Codec>;
  const saved = { ...table };
  const seen = new Set<string>();
  for (const [name, type] of Object.entries(kafkajs.CompressionTypes)) {
    const factory = typeof type === 'number' ? saved[type] : undefined;
    if (factory === undefined) continue;
    table[type as number] = () => {
      const codec = factory();
      return {
        ...codec,
        decompress: (buffer: Buffer) => {
          seen.add(name.toLowerCase());
          return codec.decompress(buffer);
        },
      };
    };
  }
  try {
    await read();
  } finally {
    Object.assign(table, saved);
  }
  return seen;
}
