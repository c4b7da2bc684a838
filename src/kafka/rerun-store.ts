// Rerun jobs and their progress in the internal state topic, beside the bulk ledger
// (compacted, JSON values): `rerun/<id>` holds the job, `rerun/<id>/<partition>` a
// partition's progress. Whatever else the topic holds is not read here.
import { setTimeout as delay } from 'node:timers/promises';
import type { KafkaMessage, Producer, Transaction } from 'kafkajs';
import { RerunError } from '../rerun/errors.ts';
import {
  isEnded,
  isRerunKey,
  jobKey,
  progressKey,
  type RerunJob,
  type RerunJobStore,
  type RerunPartitionProgress,
} from '../rerun/rerun-job.ts';
import { isFenced, KafkaError, notAuthorized, onTopics, onTransactionalId } from './errors.ts';
import { stateRecordObject } from './state-record.ts';
import { topicOffsets } from './topic-offsets.ts';
import type { TopicReaders } from './topic-reader.ts';
import { isTopicLost, TopicWatch } from './topic-watch.ts';

const PROGRESS_KEY = /^rerun\/(.+)\/(\d+)$/;

/**
 * The transactional id that every write of a job of `inputTopic` takes (`rerun start`, `run`'s
 * schedule at a slot, pause, resume, cancel, throttle): starting a producer with it fences the
 * write before (its send or commit fails), which makes read-decide-write one step. Named after
 * starts, which took it first: a cluster's ACLs grant it by that name.
 */
export const jobTransactionalId = (stateTopic: string, inputTopic: string): string =>
  `${stateTopic}.rerun-start.${inputTopic}`;

/** Writes fenced in turn by other writes of the same input topic's jobs before one gives up. */
const WRITE_ATTEMPTS = 5;

/**
 * A job write's commit that failed: whether it took effect is not known. A commit raced by the
 * write that fences it is answered in several ways besides a fencing error (Kafka 4.4 in
 * test/cli/rerun.integration.test.ts: UNKNOWN_SERVER_ERROR once and CONCURRENT_TRANSACTIONS
 * once in about 110 pairs of starts; brokers with transactions v2, INVALID_TXN_STATE:
 * KAFKA-20785). Deciding again finds out: the job is there, or it is not.
 */
class CommitUncertain extends Error {}

const isWriteRace = (error: unknown): boolean => isFenced(error) || error instanceof CommitUncertain;

/**
 * A job write's transaction holds one record from its send to its commit (milliseconds); a
 * writer killed in between leaves it open, and read_committed readers of the state topic (the
 * ledger, the executors) wait at its offset until the broker aborts it after this long, or
 * the next write of a job of the same input topic does.
 */
const WRITE_TRANSACTION_TIMEOUT_MS = 10_000;

/**
 * How long a write waits for its committed job to become readable: a transaction ahead of it
 * that a killed writer left open ends within its timeout plus the broker's check for timed-out
 * transactions (transaction.abort.timed.out.transaction.cleanup.interval.ms, 10 s by default).
 */
const READABLE_WAIT_MS = WRITE_TRANSACTION_TIMEOUT_MS + 15_000;

/**
 * Ended jobs of an input topic kept for `rerun list` and `status`; older ones go, with their
 * progress records, when a job is created (at most RETIRED_PER_WRITE of them at a time, so a
 * backlog of them fits one transaction). Kept for ever, every `run` loaded every job ever
 * created and scanned them all at each rerun record: an hourly schedule's year, 8,760 jobs,
 * held 46 MB and took 91 ms a scan.
 */
export const KEPT_ENDED_JOBS = 50;
const RETIRED_PER_WRITE = 200;

/** The job as this write tried it (a record is written whole, its times are the writer's). */
const isSameJob = (stored: RerunJob | undefined, job: RerunJob): boolean =>
  stored !== undefined && JSON.stringify(stored) === JSON.stringify(job);

export class KafkaRerunJobStore implements RerunJobStore {
  readonly #readers: TopicReaders;
  readonly #topic: string;
  readonly #producer: Producer;
  readonly #watch: TopicWatch;
  #connected: Promise<void> | undefined;
  readonly #jobs = new Map<string, RerunJob>();
  readonly #progress = new Map<string, Map<number, RerunPartitionProgress>>();
  /** Next offset to apply, per state topic partition: what load() read is not applied again by follow(). */
  readonly #next = new Map<number, bigint>();
  /** The follower's listener, once following: told of what load() applies too. */
  #changed: ((jobId: string) => void) | undefined;

  constructor(readers: TopicReaders, topic: string) {
    const { kafka } = readers;
    this.#readers = readers;
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
    // While following, what load() applies (a write of this process reads the topic first)
    // is skipped by the follower, which has not got to it: told here, or a resume read so
    // first never woke the paused share, nor a scheduled slot's job the executor.
    await this.#readers.readToEnd(this.#topic, (message, partition) => {
      const jobId = this.#apply(message, partition);
      if (jobId !== undefined) this.#changed?.(jobId);
    });
  }

  async follow(
    changed: (jobId: string) => void,
    failed: (error: Error) => void,
  ): Promise<() => Promise<void>> {
    // Its own throw-away group, from the start (like the ledger's follower): nothing written
    // between load() and joining is missed; what load() applied already is skipped by offset.
    const consumer = this.#readers.consumer('rerun');
    this.#changed = changed;
    this.#readers.onStopped(consumer, this.#topic, failed);
    const fetched = this.#readers.firstFetch(consumer, this.#topic);
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: this.#topic, fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachMessage: this.#readers.followerHandler((message, partition) => {
          const jobId = this.#apply(message, partition);
          if (jobId !== undefined) changed(jobId);
        }, failed),
      });
      await fetched;
    } catch (error) {
      this.#changed = undefined;
      await consumer.disconnect().catch(() => {});
      throw error;
    }
    return () => {
      this.#changed = undefined;
      return this.#readers.stop(consumer);
    };
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

  /**
   * Writes the job whole over whatever is there: a request decided on a job read before would
   * undo what another wrote since. Controls go through updateJob.
   */
  async saveJob(job: RerunJob): Promise<void> {
    await this.#send(jobKey(job.id), job);
    this.#jobs.set(job.id, job);
  }

  /**
   * Writes a new job unless `admit` throws, as one step against every other write of a job of
   * the same input topic (a compare-and-set, see #writeAsOneStep). A start that comes after
   * another's commit reads that job. 'found': a start raced by another write found the job
   * there as it would have written it (its own commit after all, or another's identical record).
   */
  async createJob(job: RerunJob, admit: () => Promise<void>): Promise<'written' | 'found'> {
    const { outcome } = await this.#writeAsOneStep(
      job,
      async () => {
        await admit();
        return job;
      },
      true,
    );
    return outcome;
  }

  /**
   * Writes `job` again as `change` makes it of the job as read within one step against every
   * other write of a job of the same input topic (see #writeAsOneStep): a pause, resume,
   * cancel or throttle is written on whatever another wrote before it, never under it.
   * `change` may throw (a refusal): nothing is written. Resolves to the job as written.
   */
  async updateJob(job: RerunJob, change: (current: RerunJob) => Promise<RerunJob>): Promise<RerunJob> {
    const { written } = await this.#writeAsOneStep(job, async () => {
      const current = this.#jobs.get(job.id);
      if (current === undefined)
        throw new RerunError('RERUN_NOT_FOUND', `no rerun ${job.id} in state topic ${this.#topic}`, {
          details: { jobId: job.id },
        });
      return change(current);
    });
    return written;
  }

  /**
   * Writes what `decide` makes of the topic as read, as one step: the producer with the input
   * topic's transactional id is started first, which fences any write of its jobs under way,
   * then the topic is read to its end (committed records only), `decide` decides on it, and
   * its record is written and committed in the producer's transaction. A write fenced by a
   * later one (its send refused), or whose commit failed, decides again on what is there
   * then, up to WRITE_ATTEMPTS times: finding the record it tried last (a commit that took
   * effect after all, or another's identical record) it is done: 'found'.
   */
  async #writeAsOneStep(
    job: RerunJob,
    decide: () => Promise<RerunJob>,
    retire = false,
  ): Promise<{ outcome: 'written' | 'found'; written: RerunJob }> {
    let tried: RerunJob | undefined;
    for (let attempt = 1; ; attempt += 1) {
      const began = Date.now();
      try {
        const written = await this.#writeOnce(
          job.inputTopic,
          async () => {
            if (tried !== undefined && isSameJob(this.#jobs.get(tried.id), tried)) return undefined;
            tried = await decide();
            return tried;
          },
          retire,
        );
        return written === undefined
          ? { outcome: 'found', written: tried as RerunJob }
          : { outcome: 'written', written };
      } catch (error) {
        if (!isWriteRace(error)) throw error;
        if (attempt >= WRITE_ATTEMPTS)
          throw new KafkaError(
            'STATE_WRITE_FAILED',
            `state topic ${this.#topic}: other writes of input topic ${job.inputTopic}'s jobs (starts, ` +
              `controls) came in between rerun ${job.id}'s ${attempt} times in a row; \`rerun list\` shows which started`,
            { cause: error, details: { jobId: job.id, inputTopic: job.inputTopic } },
          );
        // The write that fenced this one began after it and writes about as long after its
        // own beginning: decided again sooner, this write would fence it in turn. The random
        // part keeps two such writes from doing so in step.
        await delay((Date.now() - began) * (1 + Math.random()));
      }
    }
  }

  /**
   * `decide`: the job to write, or undefined (it is there already). `retire`: the input topic's
   * ended jobs past the newest KEPT_ENDED_JOBS are removed in the same transaction. Resolves to
   * the job written.
   */
  async #writeOnce(
    inputTopic: string,
    decide: () => Promise<RerunJob | undefined>,
    retire: boolean,
  ): Promise<RerunJob | undefined> {
    const id = jobTransactionalId(this.#topic, inputTopic);
    const producer = this.#readers.kafka.producer({
      transactionalId: id,
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: WRITE_TRANSACTION_TIMEOUT_MS,
      allowAutoTopicCreation: false,
    });
    let transaction: Transaction | undefined;
    try {
      // kafkajs asks for the producer id (the epoch that fences) at the first transaction:
      // before the read, so that a write reading at the same time cannot also write.
      transaction = await this.#writing(async () => {
        await producer.connect();
        return producer.transaction();
      }, id);
      await this.load();
      const job = await decide();
      if (job === undefined) return undefined;
      const retired = retire ? await this.#retired(inputTopic) : [];
      const open = transaction;
      const [written] = await this.#writing(() =>
        open.send({
          topic: this.#topic,
          acks: -1,
          messages: [
            { key: jobKey(job.id), value: JSON.stringify(job) },
            ...retired.map((key) => ({ key, value: null })),
          ],
        }),
      );
      await open.commit().catch((error: unknown) => {
        throw new CommitUncertain(`commit of rerun ${job.id}: ${(error as Error).message}`, { cause: error });
      });
      this.#jobs.set(job.id, job);
      for (const key of retired) this.#remove(key);
      if (written?.baseOffset !== undefined)
        await this.#readable(written.partition, BigInt(written.baseOffset));
      return job;
    } catch (error) {
      // Aborting frees read_committed readers at once; a raced write need not: the write
      // that fenced it aborted its transaction, or its commit took effect.
      if (transaction?.isActive() && !isWriteRace(error)) await transaction.abort().catch(() => {});
      throw error;
    } finally {
      await producer.disconnect().catch(() => {});
    }
  }

  /** Keys of the input topic's ended jobs past the newest KEPT_ENDED_JOBS, and of their progress. */
  async #retired(inputTopic: string): Promise<string[]> {
    // Asked once, inside the write's transaction: an input topic not there (or a broker not
    // answering at once) removes nothing this time, rather than hold the transaction open for
    // the client's retries.
    const admin = this.#readers.kafka.admin({ retry: { retries: 0 } });
    let partitions: number;
    try {
      await admin.connect();
      const { topics } = await admin.fetchTopicMetadata({ topics: [inputTopic] });
      partitions = topics[0]?.partitions.length ?? 0;
      if (partitions === 0) return [];
    } catch {
      return [];
    } finally {
      await admin.disconnect().catch(() => {});
    }
    const ended = [...this.#jobs.values()]
      .filter((job) => job.inputTopic === inputTopic && isEnded(job, this.progress(job.id), partitions))
      .sort((a, b) => b.createdAt - a.createdAt)
      .slice(KEPT_ENDED_JOBS, KEPT_ENDED_JOBS + RETIRED_PER_WRITE);
    return ended.flatMap((job) => [
      ...[...this.progress(job.id).keys()].map((partition) => progressKey(job.id, partition)),
      jobKey(job.id),
    ]);
  }

  /**
   * Waits until readers of committed records see the record at `offset`: the broker answers a
   * commit before it has written the transaction's markers, and until they are written the
   * partition's last stable offset, up to which load() reads, stays before the job (a
   * `rerun status` right after `rerun start` returned said there was no such job, about once
   * in 40 starts). Never fails the write, whose job is committed (a failed start would be
   * started again, a second job under a new id): after READABLE_WAIT_MS, or when the offsets
   * cannot be read, it resolves, and readers see the job once the transactions ahead of it end
   * (a writer killed before its commit holds one open until the broker aborts it).
   */
  async #readable(partition: number, offset: bigint): Promise<void> {
    const admin = this.#readers.kafka.admin();
    const deadline = Date.now() + READABLE_WAIT_MS;
    try {
      await admin.connect();
      for (let pause = 5; ; pause = Math.min(pause * 2, 500)) {
        const end = (await topicOffsets(admin, this.#topic)).find((p) => p.partition === partition);
        if (end === undefined || BigInt(end.high) > offset || Date.now() >= deadline) return;
        await delay(pause);
      }
    } catch {
      return;
    } finally {
      await admin.disconnect().catch(() => {});
    }
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
    const value = stateRecordObject({ topic: this.#topic, partition }, message, message.value) as unknown as
      RerunJob | RerunPartitionProgress;
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
    const admin = this.#readers.kafka.admin();
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
    await this.#writing(async () => {
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
    });
  }

  /** `transactionalId`: the id the write takes, named when the broker refuses it. */
  async #writing<T>(write: () => Promise<T>, transactionalId?: string): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isTopicLost(error)) throw error;
      // kafkajs says only "Failed to find group coordinator" when the transactional id is refused.
      const refusal = notAuthorized(error, {
        ...onTopics('Write', this.#topic),
        ...(transactionalId === undefined ? {} : onTransactionalId(transactionalId)),
      });
      throw new KafkaError(
        'STATE_WRITE_FAILED',
        `state topic ${this.#topic}: ${(refusal ?? (error as Error)).message}`,
        { cause: error, ...(refusal ? { details: refusal.details } : {}) },
      );
    }
  }
}
