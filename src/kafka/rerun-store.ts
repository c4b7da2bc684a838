// Rerun jobs and their progress in the internal state topic, beside the bulk ledger
// (compacted, JSON values): `rerun/<id>` holds the job, `rerun/<id>/<partition>` a
// partition's progress. Whatever else the topic holds is not read here.
import type { Kafka, KafkaMessage, Producer } from 'kafkajs';
import { RerunError } from '../rerun/errors.ts';
import {
  isRerunKey,
  jobKey,
  progressKey,
  type RerunJob,
  type RerunJobStore,
  type RerunPartitionProgress,
} from '../rerun/rerun-job.ts';
import { KafkaError } from './errors.ts';
import { readTopicToEnd, replayConsumer } from './topic-reader.ts';
import { isTopicMissing, TopicWatch } from './topic-watch.ts';

const PROGRESS_KEY = /^rerun\/(.+)\/(\d+)$/;

export class KafkaRerunJobStore implements RerunJobStore {
  readonly #kafka: Kafka;
  readonly #topic: string;
  readonly #producer: Producer;
  readonly #watch: TopicWatch;
  #connected: Promise<void> | undefined;
  readonly #jobs = new Map<string, RerunJob>();
  readonly #progress = new Map<string, Map<number, RerunPartitionProgress>>();
  /** Next offset to apply, per state topic partition: what load() read is not applied again by follow(). */
  readonly #next = new Map<number, bigint>();

  constructor(kafka: Kafka, topic: string) {
    this.#kafka = kafka;
    this.#topic = topic;
    this.#watch = new TopicWatch(kafka);
    // Not made anew, uncompacted, by a broker that creates topics on demand (see ledger-store.ts).
    this.#producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
    });
  }

  async load(): Promise<void> {
    await this.#assertTopic();
    await readTopicToEnd(this.#kafka, this.#topic, (message, partition) => {
      this.#apply(message, partition);
    });
  }

  async follow(changed: (jobId: string) => void): Promise<() => Promise<void>> {
    // Its own throw-away group, from the start (like the ledger's follower): nothing written
    // between load() and joining is missed; what load() applied already is skipped by offset.
    const consumer = replayConsumer(this.#kafka, 'rerun');
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: this.#topic, fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachMessage: async ({ message, partition }) => {
          const jobId = this.#apply(message, partition);
          if (jobId !== undefined) changed(jobId);
        },
      });
    } catch (error) {
      await consumer.disconnect().catch(() => {});
      throw error;
    }
    return () => consumer.disconnect();
  }

  jobs(): RerunJob[] {
    return [...this.#jobs.values()];
  }

  job(jobId: string): RerunJob | undefined {
    return this.#jobs.get(jobId);
  }

  progress(jobId: string): Map<number, RerunPartitionProgress> {
    return new Map(this.#progress.get(jobId));
  }

  async saveJob(job: RerunJob): Promise<void> {
    await this.#send(jobKey(job.id), job);
    this.#jobs.set(job.id, job);
  }

  async saveProgress(progress: RerunPartitionProgress): Promise<void> {
    await this.#send(progressKey(progress.jobId, progress.partition), progress);
    this.#setProgress(progress);
  }

  async close(): Promise<void> {
    if (this.#connected) await this.#producer.disconnect();
  }

  /** Applies a record of the topic; returns the job it concerns, if it is a rerun record not applied before. */
  #apply(message: KafkaMessage, partition: number): string | undefined {
    const offset = BigInt(message.offset);
    if (offset < (this.#next.get(partition) ?? 0n)) return undefined;
    this.#next.set(partition, offset + 1n);
    const key = message.key?.toString('utf8');
    if (key === undefined || !isRerunKey(key)) return undefined;
    if (message.value === null) return this.#remove(key);
    const value = JSON.parse(message.value.toString('utf8')) as RerunJob | RerunPartitionProgress;
    if ('jobId' in value && key === progressKey(value.jobId, value.partition)) {
      this.#setProgress(value);
      return value.jobId;
    }
    if ('id' in value && key === jobKey(value.id)) {
      this.#jobs.set(value.id, value);
      return value.id;
    }
    return undefined;
  }

  #setProgress(progress: RerunPartitionProgress): void {
    const byPartition = this.#progress.get(progress.jobId) ?? new Map<number, RerunPartitionProgress>();
    byPartition.set(progress.partition, progress);
    this.#progress.set(progress.jobId, byPartition);
  }

  /** A tombstone: a job id may itself end in `/<digits>`, so a known job is matched first. */
  #remove(key: string): string | undefined {
    const jobId = key.slice('rerun/'.length);
    if (this.#jobs.delete(jobId)) {
      this.#progress.delete(jobId);
      return jobId;
    }
    const match = PROGRESS_KEY.exec(key);
    if (match === null) return undefined;
    const [, progressJobId, partition] = match as unknown as [string, string, string];
    this.#progress.get(progressJobId)?.delete(Number(partition));
    return progressJobId;
  }

  async #assertTopic(): Promise<void> {
    const admin = this.#kafka.admin();
    await admin.connect();
    try {
      if (!(await admin.listTopics()).includes(this.#topic)) {
        throw new RerunError(
          'RERUN_STATE_TOPIC_MISSING',
          `state topic ${this.#topic} does not exist; \`partner-enrich topics create\` creates it (compacted)`,
          { details: { topic: this.#topic } },
        );
      }
    } finally {
      await admin.disconnect();
    }
  }

  async #send(key: string, value: RerunJob | RerunPartitionProgress): Promise<void> {
    try {
      // A failed connect is tried again on the next write, not remembered.
      this.#connected ??= this.#producer.connect().catch((error: unknown) => {
        this.#connected = undefined;
        throw error;
      });
      await this.#connected;
      await this.#watch.guard(
        [this.#topic],
        this.#producer.send({
          topic: this.#topic,
          acks: -1,
          messages: [{ key, value: JSON.stringify(value) }],
        }),
      );
    } catch (error) {
      if (isTopicMissing(error)) throw error;
      throw new KafkaError('STATE_WRITE_FAILED', `state topic ${this.#topic}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
}
