// A topic of the pipeline deleted while `run` runs. kafkajs takes the broker's "unknown topic
// or partition" for a transient answer (a leader moving, a broker restarting, metadata not
// yet spread) and retries for the client's whole budget, about 80 s, before it fails a write
// or crashes the consumer; meanwhile the process looked alive and ready. It never tells its
// caller what the broker answered until then, so a write (or fetch) that stalls is the sign:
// one metadata request then says whether its topic is still there. A topic the broker no
// longer lists is TOPIC_MISSING, at once; any other answer (the topic listed, no broker
// answering) leaves the client's retries to ride it out, as before.
//
// An idle pipeline writes and fetches nothing that could stall (a fetch waiting for records
// is answered empty after 250 ms): `run` also looks at all of its topics every WATCH_EVERY_MS,
// so that a topic deleted while no record comes ends it too, instead of /healthz 200 until the
// next write.
//
// A topic deleted and made anew under the same name (`kafka-topics --delete`, then `--create`
// or `topics create`) is listed again: the listing cannot tell. kafkajs's metadata requests
// (v6 at most) carry no topic ids, which came with v10. The sign used instead is the offsets the
// broker acknowledges: with acks from all in-sync replicas (every write of the pipeline) an
// acknowledged record stays in its partition's log, whose end only grows, so a write
// acknowledged at an offset no later than one acknowledged before it was sent went into another
// log (the topic made anew, or a log cut back by an unclean leader election). The write is
// TOPIC_RECREATED before its caller is told it succeeded: nothing after it is committed, and the
// pipeline writes no further into a storage or state topic that lost what it held. Checked on
// each acknowledgement, so it costs no request; an idle pipeline meets it at its next write.
import type { Kafka, RecordMetadata } from 'kafkajs';
import { KafkaError } from './errors.ts';

/**
 * How long a write or fetch may take before the topic is looked up: well above a healthy
 * acknowledgement (milliseconds; a fetch waits 250 ms for records), far below kafkajs's
 * retries. While it stays stalled, the topic is looked up again as often.
 */
const STALL_MS = 2_000;

/**
 * How often `run` looks at its topics while nothing stalls: one metadata request, so a deleted
 * topic fails /healthz within this plus the request. Well inside what makes the deployment's
 * liveness probe restart a replica (10 s apart, 3 failures: 30 s of 503 after the failure), and
 * a cost of nothing measurable (one request in 15 s beside a pipeline's hundreds per second).
 */
export const WATCH_EVERY_MS = 15_000;

/**
 * The listing under way per client: one serves every watch of that client that asks meanwhile
 * (writes stalled together, the periodic look).
 */
const listings = new WeakMap<Kafka, Promise<Set<string> | undefined>>();

/** Per topic, the highest offset a write was acknowledged at, per partition. */
type Acknowledged = Map<string, Map<number, bigint>>;

/**
 * Per client: every producer of the client (the sink's, the ledger's two, the rerun store's, the
 * transactions') appends to the same logs.
 */
const acknowledged = new WeakMap<Kafka, Acknowledged>();

/** Armed while something is under way; disarmed once it answered. */
export interface Stall {
  begin(): void;
  end(): void;
}

export class TopicWatch {
  readonly #kafka: Kafka;
  readonly #acknowledged: Acknowledged;

  constructor(kafka: Kafka) {
    this.#kafka = kafka;
    let offsets = acknowledged.get(kafka);
    if (!offsets) {
      offsets = new Map();
      acknowledged.set(kafka, offsets);
    }
    this.#acknowledged = offsets;
  }

  /**
   * The first of `topics` the cluster's metadata does not list; undefined when all are listed
   * or no broker answered (a missing topic is only ever confirmed, never assumed).
   */
  async missing(topics: readonly string[]): Promise<string | undefined> {
    let listing = listings.get(this.#kafka);
    if (!listing) {
      listing = this.#list().finally(() => listings.delete(this.#kafka));
      listings.set(this.#kafka, listing);
    }
    const listed = await listing;
    return listed && topics.find((topic) => !listed.has(topic));
  }

  async #list(): Promise<Set<string> | undefined> {
    // The listing's own short retry; connecting retries as the client does (a broker away
    // answers nothing for as long, while the write's own retries go on).
    const admin = this.#kafka.admin({ retry: { retries: 1, initialRetryTime: 100 } });
    try {
      await admin.connect();
      return new Set(await admin.listTopics());
    } catch {
      return undefined;
    } finally {
      await admin.disconnect().catch(() => {});
    }
  }

  /**
   * Calls `missing` with TOPIC_MISSING when, begun and not ended for `everyMs`, one of `topics`
   * is no longer listed; looks again every `everyMs` while it stays stalled. Calls it at most once.
   */
  stall(topics: readonly string[], missing: (error: KafkaError) => void, everyMs = STALL_MS): Stall {
    let armed: NodeJS.Timeout | undefined;
    // A look-up answered after end() (or after end() and a new begin()) is not this stall's.
    let generation = 0;
    let reported = false;
    const arm = (of: number) => {
      armed = setTimeout(() => void look(of), everyMs).unref();
    };
    const look = async (of: number) => {
      const topic = await this.missing(topics);
      if (of !== generation || reported) return;
      if (topic === undefined) return arm(of);
      reported = true;
      missing(topicMissing(topic));
    };
    return {
      begin: () => {
        if (armed === undefined && !reported) arm(generation);
      },
      end: () => {
        clearTimeout(armed);
        armed = undefined;
        generation += 1;
      },
    };
  }

  /**
   * Calls `missing` with TOPIC_MISSING once one of `topics` is no longer listed, looking every
   * `everyMs` until the returned stop is called: a stall that begins now and never ends.
   */
  watch(
    topics: readonly string[],
    missing: (error: KafkaError) => void,
    everyMs = WATCH_EVERY_MS,
  ): () => void {
    const watching = this.stall(topics, missing, everyMs);
    watching.begin();
    return () => watching.end();
  }

  /**
   * `write`'s outcome; TOPIC_MISSING as soon as one of `topics` is confirmed deleted while it
   * stalls; TOPIC_RECREATED when it was acknowledged at an offset no later than one of the same
   * partition acknowledged before it was sent. Called as the write is sent.
   */
  guard(topics: readonly string[], write: Promise<RecordMetadata[]>): Promise<RecordMetadata[]> {
    // Acknowledged before this write was sent, so appended before it: a concurrent write of
    // another producer may be acknowledged first and still be appended after it. Of the
    // written topics only, a copy of some partitions' offsets: a few µs a request.
    const before: Acknowledged = new Map(
      topics.map((topic) => [topic, new Map(this.#acknowledged.get(topic))]),
    );
    return new Promise<RecordMetadata[]>((resolve, reject) => {
      const stall = this.stall(topics, reject);
      stall.begin();
      write.then(
        (written) => {
          stall.end();
          const recreated = this.#acknowledge(before, written);
          if (recreated) reject(recreated);
          else resolve(written);
        },
        (error: unknown) => {
          stall.end();
          reject(error as Error);
        },
      );
    });
  }

  /** Records the offsets `written` was acknowledged at; TOPIC_RECREATED for one not past `before`'s. */
  #acknowledge(before: Acknowledged, written: RecordMetadata[]): KafkaError | undefined {
    let recreated: KafkaError | undefined;
    for (const { topicName, partition, baseOffset } of written) {
      // Only a write that asks for no acknowledgement has none; the pipeline's all do.
      if (baseOffset === undefined) continue;
      const offset = BigInt(baseOffset);
      const earlier = before.get(topicName)?.get(partition);
      if (earlier !== undefined && offset <= earlier)
        recreated ??= topicRecreated(topicName, partition, offset, earlier);
      let partitions = this.#acknowledged.get(topicName);
      if (!partitions) {
        partitions = new Map();
        this.#acknowledged.set(topicName, partitions);
      }
      if (offset > (partitions.get(partition) ?? -1n)) partitions.set(partition, offset);
    }
    return recreated;
  }
}

/** The topic is gone, or is not the one written before: nothing more may be written to it. */
export const isTopicLost = (error: unknown): error is KafkaError =>
  error instanceof KafkaError && (error.code === 'TOPIC_MISSING' || error.code === 'TOPIC_RECREATED');

export function topicMissing(topic: string): KafkaError {
  return new KafkaError(
    'TOPIC_MISSING',
    `topic ${topic} does not exist any more (deleted while running); nothing written to it since is ` +
      "committed. `partner-enrich topics create` creates the pipeline's topics",
    { details: { topic } },
  );
}

/** The input topic's partition read from `offset` on, where `next` was due: its log was made anew (or cut back). */
export function inputWentBack(topic: string, partition: number, offset: number, next: number): KafkaError {
  return new KafkaError(
    'TOPIC_RECREATED',
    `topic ${topic} was deleted and made anew while running (or its log cut back): partition ${partition} ` +
      `was read again from offset ${offset}, where offset ${next} was next. Its records there are new ones, ` +
      'at offsets already read; none of them is processed or committed',
    { details: { topic, partition, offset: String(offset), next: String(next) } },
  );
}

export function topicRecreated(
  topic: string,
  partition: number,
  offset: bigint,
  acknowledged: bigint,
): KafkaError {
  return new KafkaError(
    'TOPIC_RECREATED',
    `topic ${topic} was deleted and made anew while running (or its log cut back): partition ${partition} ` +
      `took a write at offset ${offset}, where offset ${acknowledged} had been acknowledged before. The new ` +
      "topic holds none of the old one's records; nothing written since is committed",
    { details: { topic, partition, offset: String(offset), acknowledged: String(acknowledged) } },
  );
}
