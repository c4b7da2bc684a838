// The input topic as a record source. Offsets are never committed by kafkajs itself:
// the pipeline commits a partition's position only when every record before it is
// finished (see pipeline/committer.ts). Pausing stops fetching; nothing is buffered.
//
// kafkajs rebalances eagerly and has no revocation callback: a member learns its new
// assignment when it has joined again (GROUP_JOIN). What it held before and does not hold
// now was revoked; what it holds again is fetched anew from the committed offset (the
// pipeline drops the copies). A crash that kafkajs restarts from leaves the group, so
// everything is revoked then.
//
// The input topic deleted while running: kafkajs fetches it again and again for its whole
// retry budget (about 80 s) before it crashes; a fetch that stalls makes the topic be looked
// up, and one the broker no longer lists fails the source (TOPIC_MISSING, topic-watch.ts).
//
// Deleted and made anew at once, it is listed again, and kafkajs, told its fetch position is
// out of range, starts the partition over from the new log's start: the records there came at
// offsets the pipeline had read already, and it dropped them as Kafka's copies (21 of 25 lost,
// the process healthy). A partition's fetch only goes back after a join (from the committed
// offset) or a seek of ours (rewind): a batch that starts before the next offset expected
// otherwise fails the source (TOPIC_RECREATED) before any of its records is taken. The group's
// committed offsets are still the old logs' (Kafka 4.4 keeps them through the deletion), and a
// restart would resume each new log there, past its first records: closing, the source
// commits instead the start of every partition's new log, also of those other members hold
// (the coordinator takes a member's commit for any partition): its exit rebalances the group,
// and they re-fetch from the committed offsets before their own fetches could tell.
import type { Consumer, Kafka } from 'kafkajs';
import type { Committable } from '../pipeline/commit-watermark.ts';
import type { PartitionRef, RecordSource, SourceHandler } from '../pipeline/ports.ts';
import type { InputRecord, RecordHeaders } from '../pipeline/records.ts';
import { finishedWithin } from '../finished-within.ts';
import { traceConsume } from '../observability/tracing.ts';
import { notAuthorized, onTopics } from './errors.ts';
import { topicOffsets } from './topic-offsets.ts';
import { inputWentBack, TopicWatch, type Stall } from './topic-watch.ts';

/** Longest a fetch waits for records at the broker, and for a resumed partition to be fetched. */
const MAX_FETCH_WAIT_MS = 250;

/** Well inside kafkajs's default 3 s heartbeat interval and any sane session timeout. */
const HEARTBEAT_EVERY_MS = 1000;

/**
 * How long the consumer may go without an answer from any broker before readiness names it.
 * A member asks every 250 ms (fetches) or, every partition paused or none assigned, every 3 s
 * (heartbeats): three heartbeats missed is an outage, not a slow answer. kafkajs itself rides
 * out a broker away for as long as its retries last and tells nobody meanwhile.
 */
const UNANSWERED_MS = 10_000;

/**
 * How long the close may wait for the member to leave its group (0.2 s while the brokers
 * answer). kafkajs's stop waits for its fetch loop, which sits out its retry's backoff while the
 * group's coordinator moves: in a broker failover it took 4 s, and a follower's as long as the
 * whole exit bound. The pipeline's commits are made before; a member left behind is dropped by
 * the coordinator after its session timeout, and the group rebalances then.
 */
export const LEAVE_GROUP_MS = 5_000;

export interface KafkaSourceOptions {
  topic: string;
  groupId: string;
  sessionTimeoutMs: number;
}

/**
 * The record's timestamp in epoch ms, or -1 (Kafka's "none") when it is no safe integer: a
 * producer that wrote nanoseconds (brokers take any timestamp unless
 * message.timestamp.after.max.ms says otherwise) made a storage record Avro cannot hold as a
 * long, and the pipeline failed on it at every restart.
 */
const timestampOf = (text: string): number => {
  const timestamp = Number(text);
  return Number.isSafeInteger(timestamp) ? timestamp : -1;
};

function headerText(
  headers: Record<string, Buffer | string | (Buffer | string)[] | undefined> = {},
): Record<string, string> {
  const text: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined) text[name] = String(Array.isArray(value) ? value[0] : value);
  }
  return text;
}

const refKey = (ref: PartitionRef) => `${ref.topic}:${ref.partition}`;

export class KafkaSource implements RecordSource {
  readonly #consumer: Consumer;
  readonly #options: KafkaSourceOptions;
  /** What this member was assigned at its last join. */
  #assignment = new Map<string, PartitionRef>();
  #memberId: string | undefined;
  #members: { at: number; members: Promise<Set<string>> } | undefined;
  /** Every id this process joined under: after a consumer crash it rejoins under a new one. */
  readonly #ownMemberIds = new Set<string>();
  readonly #kafka: Kafka;
  #stopped = false;
  #fetching: Stall | undefined;
  /** When a broker last answered the consumer, any request (fetch, heartbeat, commit, metadata). */
  #answeredAt = Date.now();
  /**
   * Joining its group, a member's request waits at the coordinator until every member rejoined
   * (a silent one for up to its session timeout): no answer then is no outage, and the
   * pipeline names the rebalance itself.
   */
  #joining = true;
  /** Per partition, the offset its next batch starts at: past the last record taken. */
  readonly #next = new Map<number, number>();
  /** The topic was found made anew: every partition is committed at its new start on close. */
  #madeAnew = false;

  constructor(kafka: Kafka, options: KafkaSourceOptions) {
    this.#kafka = kafka;
    this.#options = options;
    this.#consumer = kafka.consumer({
      groupId: options.groupId,
      sessionTimeout: options.sessionTimeoutMs,
      allowAutoTopicCreation: false,
      // The client's retries (about 80 s, createKafka), not kafkajs's 5 for consumers (about
      // 10 s); past them the crash ends the pipeline and the process exits for its supervisor.
      // kafkajs would restart the consumer in-process instead, out of its group meanwhile, for
      // as long as the broker stays away, while the process looked ready and alive.
      retry: { restartOnFailure: async () => false },
      // kafkajs waits this long before fetching again while every partition is paused, so a
      // resume (the quota window reset, intake drained) took effect only after it: with the
      // default 5 s, live records under a 2 s quota window stalled for whole windows and then
      // came in bursts (rerun benchmark, live alone: windows used 10 %, 0 %, 100 %, ...).
      maxWaitTimeInMs: MAX_FETCH_WAIT_MS,
      // A fetch response is held whole until its records are taken: at most about as many
      // records as batching.maxInFlightRecords allows, not kafkajs's 1 MiB per partition and
      // 10 MiB per response. Part of the measured memory setting (docs/BENCHMARKS.md,
      // Memory); alone it did not lower the peak measurably.
      maxBytesPerPartition: 256 * 1024,
      maxBytes: 2 * 1024 * 1024,
    });
  }

  get consumer(): Consumer {
    return this.#consumer;
  }

  async start(handler: SourceHandler): Promise<void> {
    const { topic } = this.#options;
    const { GROUP_JOIN, REBALANCING, CRASH, FETCH_START, FETCH, REQUEST, END_BATCH_PROCESS } =
      this.#consumer.events;
    const fetching = new TopicWatch(this.#kafka).stall([topic], (error) => {
      if (!this.#stopped) handler.failed(error);
    });
    this.#fetching = fetching;
    this.#consumer.on(FETCH_START, () => fetching.begin());
    this.#consumer.on(FETCH, () => fetching.end());
    this.#consumer.on(REQUEST, () => (this.#answeredAt = Date.now()));
    this.#consumer.on(GROUP_JOIN, ({ payload }) => {
      this.#joining = false;
      this.#next.clear();
      this.#answeredAt = Date.now();
      this.#memberId = payload.memberId;
      this.#ownMemberIds.add(payload.memberId);
      this.#joined(handler, payload.memberAssignment);
    });
    this.#consumer.on(REBALANCING, () => {
      this.#joining = true;
      handler.rebalancing();
    });
    // A fetch of a transaction's marker (or of aborted records) alone never reaches eachBatch:
    // kafkajs moves past it and says so here. Without telling the pipeline, the committed
    // position of an input written in transactions stayed on the last marker, one short of the
    // partition's end for good (a lag of 1 to every tool that reads it).
    this.#consumer.on(END_BATCH_PROCESS, ({ payload }) => {
      if (payload.batchSize !== 0 || this.#stopped) return;
      // Not taken as the partition's next offset (#next): kafkajs does not tell a batch fetched
      // before a join or seek from one after it here, and a stale one must not fail the source.
      const offset = Number(payload.lastOffset);
      handler.passed?.({ topic: payload.topic, partition: payload.partition, offset });
    });
    this.#consumer.on(CRASH, ({ payload }) => {
      // kafkajs disconnects before it restarts: the group takes back every partition.
      this.#next.clear();
      this.#joined(handler, {});
      if (!payload.restart && !this.#stopped) handler.failed(this.#refused(payload.error));
    });
    await this.#consumer.connect();
    await this.#consumer.subscribe({ topic, fromBeginning: true });
    await this.#consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        const next = this.#next.get(batch.partition);
        const first = batch.messages[0];
        if (next !== undefined && first !== undefined && Number(first.offset) < next && !isStale()) {
          if (this.#stopped) return;
          // A deletion makes every partition of the topic anew (an unclean leader election cuts
          // back one alone: every partition is read again from its start, none lost).
          this.#madeAnew = true;
          handler.failed(inputWentBack(topic, batch.partition, Number(first.offset), next));
          return;
        }
        let lastHeartbeat = Date.now();
        let taken = 0;
        for (const message of batch.messages) {
          if (this.#stopped || !isRunning() || isStale()) break;
          const record: InputRecord = {
            position: { topic: batch.topic, partition: batch.partition, offset: Number(message.offset) },
            key: message.key,
            value: message.value,
            headers: headerText(message.headers),
            timestamp: timestampOf(message.timestamp),
          };
          if (message.headers) record.originalHeaders = message.headers as RecordHeaders;
          const offered = traceConsume(record, this.#options.groupId, () => handler.offer(record));
          // Not taken (intake full, or the partition is not ours): the next fetch after resume
          // starts here, since only resolved offsets move kafkajs's fetch position.
          if (!offered) break;
          taken += 1;
          resolveOffset(message.offset);
          this.#next.set(batch.partition, record.position.offset + 1);
          if (Date.now() - lastHeartbeat > HEARTBEAT_EVERY_MS) {
            await heartbeat();
            lastHeartbeat = Date.now();
          }
        }
        // Every record taken: kafkajs moves the fetch past a transaction's marker that ends the
        // batch (resolving the last record resolves it), so the pipeline hears of it here.
        const last = batch.messages.at(-1);
        const end = Number(batch.lastOffset());
        if (taken === batch.messages.length && last !== undefined && end > Number(last.offset))
          handler.passed?.({ topic: batch.topic, partition: batch.partition, offset: end });
      },
    });
  }

  #joined(handler: SourceHandler, memberAssignment: Record<string, number[]>): void {
    const next = new Map<string, PartitionRef>();
    for (const [topic, partitions] of Object.entries(memberAssignment))
      for (const partition of partitions) next.set(refKey({ topic, partition }), { topic, partition });
    const revoked = [...this.#assignment].filter(([key]) => !next.has(key)).map(([, ref]) => ref);
    this.#assignment = next;
    handler.revoked(revoked);
    handler.assigned([...next.values()]);
  }

  get unreachable(): string | undefined {
    if (this.#stopped || this.#joining) return undefined;
    const silentMs = Date.now() - this.#answeredAt;
    if (silentMs < UNANSWERED_MS) return undefined;
    return `kafka broker unreachable: no broker has answered the consumer for ${Math.floor(silentMs / 1000)} s`;
  }

  /**
   * KAFKA_NOT_AUTHORIZED for a refusal of the group or the input topic: kafkajs says only
   * "Failed to find group coordinator" when the group is refused.
   */
  #refused(error: Error): Error {
    const { topic, groupId } = this.#options;
    return (
      notAuthorized(error, {
        ...onTopics('Read', topic),
        group: { operation: 'Read', resource: `Group ${groupId}` },
      }) ?? error
    );
  }

  get memberId(): string | undefined {
    return this.#memberId;
  }

  /**
   * The group's members now, and every id this process had: its own submissions are alive
   * while it is. Asked by every record waiting on an intent: one answer serves all for a second.
   */
  groupMembers(): Promise<Set<string>> {
    const now = Date.now();
    if (!this.#members || now - this.#members.at > 1_000) {
      const members = this.#describeMembers();
      this.#members = { at: now, members };
      members.catch(() => (this.#members = undefined));
    }
    return this.#members.members;
  }

  async #describeMembers(): Promise<Set<string>> {
    const admin = this.#kafka.admin();
    await admin.connect();
    try {
      const { groups } = await admin.describeGroups([this.#options.groupId]);
      return new Set([...this.#ownMemberIds, ...(groups[0]?.members.map((member) => member.memberId) ?? [])]);
    } finally {
      await admin.disconnect();
    }
  }

  get resumeDelayMs(): number {
    return MAX_FETCH_WAIT_MS;
  }

  pause(partitions: PartitionRef[]): void {
    this.#whileRunning(() => this.#consumer.pause(byTopic(partitions)));
  }

  resume(partitions: PartitionRef[]): void {
    this.#whileRunning(() => this.#consumer.resume(byTopic(partitions)));
  }

  /**
   * kafkajs refuses pause and resume while its consumer is not running (after a crash, before
   * it restarts). Nothing is fetched then anyway, and the pipeline states every partition's
   * pause anew when it is assigned again.
   */
  #whileRunning(change: () => void): void {
    try {
      change();
    } catch (error) {
      if ((error as Error).name !== 'KafkaJSNonRetriableError') throw error;
    }
  }

  async commit(positions: Committable[]): Promise<void> {
    await this.#consumer.commitOffsets(
      positions.map((p) => ({ topic: p.topic, partition: p.partition, offset: String(p.offset) })),
    );
  }

  /**
   * Continues the partitions from the positions committed now. The consumer read them when it
   * joined; a transaction of the partition's former owner that ended since (exactly-once: its
   * producer was fenced after the join) may have moved them.
   */
  async rewind(partitions: PartitionRef[]): Promise<void> {
    const { topic, groupId } = this.#options;
    const admin = this.#kafka.admin();
    await admin.connect();
    try {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      const low = new Map((await topicOffsets(admin, topic)).map((p) => [p.partition, p.low]));
      for (const ref of partitions) {
        this.#next.delete(ref.partition);
        const offset = committed?.partitions.find((p) => p.partition === ref.partition)?.offset ?? '-1';
        // Nothing committed yet: from the beginning, as the consumer subscribes.
        const from = Number(offset) >= 0 ? offset : (low.get(ref.partition) ?? '0');
        this.#whileRunning(() =>
          this.#consumer.seek({ topic: ref.topic, partition: ref.partition, offset: from }),
        );
      }
    } finally {
      await admin.disconnect();
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#fetching?.end();
    this.#whileRunning(() => this.#consumer.pause([{ topic: this.#options.topic }]));
  }

  async close(): Promise<void> {
    this.#stopped = true;
    this.#fetching?.end();
    try {
      // After the pipeline's last commit, before the member leaves its group.
      if (this.#madeAnew) await this.#commitStarts();
    } finally {
      await finishedWithin(this.#consumer.disconnect(), LEAVE_GROUP_MS);
    }
  }

  /** Commits the first offset of each partition's log: where its next reader begins. */
  async #commitStarts(): Promise<void> {
    const { topic } = this.#options;
    const admin = this.#kafka.admin();
    await admin.connect();
    try {
      const starts = await topicOffsets(admin, topic);
      await this.#consumer.commitOffsets(
        starts.map(({ partition, low }) => ({ topic, partition, offset: low })),
      );
    } finally {
      await admin.disconnect();
    }
  }
}

function byTopic(partitions: PartitionRef[]): { topic: string; partitions: number[] }[] {
  const topics = new Map<string, number[]>();
  for (const { topic, partition } of partitions) topics.set(topic, [...(topics.get(topic) ?? []), partition]);
  return [...topics].map(([topic, list]) => ({ topic, partitions: list }));
}
