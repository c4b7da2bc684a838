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
import type { Kafka } from 'kafkajs';
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

/** Armed while something is under way; disarmed once it answered. */
export interface Stall {
  begin(): void;
  end(): void;
}

export class TopicWatch {
  readonly #kafka: Kafka;

  constructor(kafka: Kafka) {
    this.#kafka = kafka;
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

  /** `write`'s outcome, or TOPIC_MISSING as soon as one of `topics` is confirmed deleted while it stalls. */
  guard<T>(topics: readonly string[], write: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const stall = this.stall(topics, reject);
      stall.begin();
      write.then(
        (value) => {
          stall.end();
          resolve(value);
        },
        (error: unknown) => {
          stall.end();
          reject(error as Error);
        },
      );
    });
  }
}

export const isTopicMissing = (error: unknown): error is KafkaError =>
  error instanceof KafkaError && error.code === 'TOPIC_MISSING';

export function topicMissing(topic: string): KafkaError {
  return new KafkaError(
    'TOPIC_MISSING',
    `topic ${topic} does not exist any more (deleted while running); nothing written to it since is ` +
      "committed. `partner-enrich topics create` creates the pipeline's topics",
    { details: { topic } },
  );
}
