// Creates the pipeline's topics if they are missing: storage and internal state are
// compacted (latest value per key); the others keep a retention window.
import type { Admin, ITopicConfig } from 'kafkajs';
import { KafkaError, notAuthorized, onTopics } from './errors.ts';
import { describeTopicConfig } from './topic-configs.ts';
import { describeRefused } from './topic-presence.ts';

export interface TopicNames {
  input: string;
  matches: string;
  events: string;
  storage: string;
  deadLetters: string;
  state: string;
}

export interface TopicLayout {
  partitions: number;
  replicationFactor: number;
}

/** Every topic of the pipeline, in the order `topics create` makes them. */
export const pipelineTopicNames = (names: TopicNames): string[] => [
  names.input,
  names.matches,
  names.events,
  names.storage,
  names.deadLetters,
  names.state,
];

const COMPACTED = [{ name: 'cleanup.policy', value: 'compact' }];

export interface CreatedTopics {
  /** The topics that were missing and are now created. */
  created: string[];
  /**
   * Lines for the operator about created topics whose partition count was taken from an
   * existing topic instead of `topics.partitions`.
   */
  notes: string[];
}

export async function createPipelineTopics(
  admin: Admin,
  names: TopicNames,
  layout: TopicLayout,
): Promise<CreatedTopics> {
  const existing = new Set(await admin.listTopics());
  const missing = (topic: string) => !existing.has(topic);
  await assertExistingTopicsFit(admin, names, existing);
  // Input partition N's partner state lives in storage partition N, and `run` refuses to
  // start (STATE_NOT_COPARTITIONED) when the two counts differ: a storage or input topic
  // created beside the other one, which exists already (made by hand, or by the producers'
  // tooling with its own count), takes that topic's count, not topics.partitions.
  const partitions = new Map<string, number>();
  const notes: string[] = [];
  const pair = [
    { topic: names.input, role: 'input', other: names.storage, otherRole: 'storage' },
    { topic: names.storage, role: 'storage', other: names.input, otherRole: 'input' },
  ];
  for (const { topic, other, otherRole } of pair) {
    if (!missing(topic) || missing(other)) continue;
    const count = await partitionCount(admin, other);
    if (count === 0) continue; // no metadata yet: nothing to match
    partitions.set(topic, count);
    if (count !== layout.partitions)
      notes.push(
        `${topic}: ${count} partitions, as ${otherRole} topic ${other} has (not topics.partitions ${layout.partitions})`,
      );
  }
  const wanted = [
    { topic: names.input, configEntries: [] },
    { topic: names.matches, configEntries: [] },
    { topic: names.events, configEntries: [] },
    { topic: names.storage, configEntries: COMPACTED },
    { topic: names.deadLetters, configEntries: [] },
    { topic: names.state, configEntries: COMPACTED },
  ].filter((t) => missing(t.topic));
  if (wanted.length === 0) return { created: [], notes };
  try {
    await createTopicsWithLeaders(
      admin,
      wanted.map((t) => ({
        ...t,
        numPartitions: partitions.get(t.topic) ?? layout.partitions,
        replicationFactor: layout.replicationFactor,
      })),
    );
  } catch (error) {
    throw (
      refusedCreation(
        error,
        wanted.map((t) => t.topic),
        layout,
      ) ?? error
    );
  }
  return { created: wanted.map((t) => t.topic), notes };
}

/**
 * The existing topics that the pipeline needs in a given shape: the storage topic with as
 * many partitions as the input (`run` refuses to start otherwise), the storage and state
 * topics compacted (their latest value per key is the partner state, the bulk ledger and the
 * rerun jobs; deleted by retention, they are lost). topics create must not report success
 * over them; it does not change them either (a cleanup policy or partition count is the
 * operator's call, and partitions cannot be taken away), so it refuses before creating anything.
 */
async function assertExistingTopicsFit(
  admin: Admin,
  names: TopicNames,
  existing: Set<string>,
): Promise<void> {
  const problems: string[] = [];
  if (existing.has(names.input) && existing.has(names.storage)) {
    const [input, storage] = [
      await partitionCount(admin, names.input),
      await partitionCount(admin, names.storage),
    ];
    if (input !== storage)
      problems.push(
        `storage topic ${names.storage} has ${storage} partitions and input topic ${names.input} has ${input} ` +
          '(the partner state of input partition N is kept in storage partition N)',
      );
  }
  const compacted = [
    { role: 'storage', topic: names.storage },
    { role: 'state', topic: names.state },
  ].filter((t) => existing.has(t.topic));
  if (compacted.length > 0) {
    const resources = await describeTopicConfig(
      admin,
      compacted.map(({ topic }) => topic),
      'cleanup.policy',
    );
    for (const { role, topic } of compacted) {
      const policy = resources
        .find((r) => r.resourceName === topic)
        ?.configEntries.find((e) => e.configName === 'cleanup.policy')?.configValue;
      // Kafka's default policy is delete; "compact,delete" compacts too (and also deletes by
      // retention, which the operator chose on purpose).
      const policies = (policy ?? 'delete').split(',').map((p) => p.trim());
      if (!policies.includes('compact'))
        problems.push(`${role} topic ${topic} is not compacted (cleanup.policy ${policy ?? 'delete'})`);
    }
  }
  if (problems.length === 0) return;
  throw new KafkaError(
    'TOPIC_MISCONFIGURED',
    `existing topics do not fit the pipeline: ${problems.join('; ')}; nothing was created. ` +
      'Fix or recreate these topics, then run topics create again',
    { details: { problems } },
  );
}

type TopicRefusal = { type?: unknown; message?: unknown; topic?: unknown };

/**
 * TOPIC_CREATE_REFUSED when the broker answered the creation with per-topic errors (a
 * replication factor above the broker count, a policy, an invalid config): a refusal to
 * report with the broker's reason, not a bug. The broker handles each topic on its own, so
 * the topics it did not refuse were created. Undefined for any other failure.
 */
function refusedCreation(error: unknown, asked: string[], layout: TopicLayout): KafkaError | undefined {
  const e = error as { name?: unknown; errors?: unknown } & TopicRefusal;
  const errors: TopicRefusal[] =
    e.name === 'KafkaJSAggregateError' && Array.isArray(e.errors) ? (e.errors as TopicRefusal[]) : [e];
  // A topic made by someone else since the listing is there, as wanted.
  const refusals = errors.filter(
    (r) => typeof r.topic === 'string' && typeof r.type === 'string' && r.type !== 'TOPIC_ALREADY_EXISTS',
  );
  if (refusals.length === 0 || refusals.length !== errors.length) return undefined;
  const reasonOf = new Map(
    refusals.map((r) => [String(r.topic), `${String(r.message)} (${String(r.type)})`]),
  );
  const refused = asked.flatMap((topic) => {
    const reason = reasonOf.get(topic);
    return reason === undefined ? [] : [{ topic, reason }];
  });
  const created = asked.filter((topic) => !reasonOf.has(topic));
  // One clause per reason, its topics in the order they were asked for: a replication factor
  // the cluster cannot give refuses every topic for the same reason.
  const byReason = Map.groupBy(refused, (r) => r.reason);
  return new KafkaError(
    'TOPIC_CREATE_REFUSED',
    [...byReason]
      .map(
        ([reason, topics]) =>
          `the broker refused to create ${topics.map((t) => t.topic).join(', ')}: ${reason}`,
      )
      .join('; ') +
      ` (asked for topics.partitions ${layout.partitions}, topics.replicationFactor ${layout.replicationFactor}); ` +
      (created.length === 0 ? 'nothing was created' : `created: ${created.join(', ')}`),
    { cause: error, details: { refused, created } },
  );
}

async function partitionCount(admin: Admin, topic: string): Promise<number> {
  const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
  return topics.find((t) => t.name === topic)?.partitions.length ?? 0;
}

/** Creates the topics and resolves once every partition has a leader (see waitForLeaders). */
export async function createTopicsWithLeaders(admin: Admin, topics: ITopicConfig[]): Promise<void> {
  await admin.createTopics({ waitForLeaders: false, topics });
  await waitForLeaders(
    admin,
    topics.map((t) => t.topic),
  );
}

/**
 * Resolves once every partition of the topics has a leader. kafkajs's own wait gives up
 * when a KRaft broker answers "unknown topic" for a topic it created a moment ago (its
 * metadata cache lags under load); here that answer just means "not yet".
 */
async function waitForLeaders(admin: Admin, topics: string[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { topics: metadata } = await admin.fetchTopicMetadata({ topics });
      if (
        metadata.length === topics.length &&
        metadata.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))
      ) {
        return;
      }
    } catch (error) {
      // Created but not to be described (no Describe ACL): waiting would not change that; it
      // waited the whole minute, then failed without a code.
      if (notAuthorized(error, onTopics('Describe', topics)))
        throw (await describeRefused(admin, topics)) ?? error;
      if (Date.now() > deadline) throw error;
    }
    if (Date.now() > deadline)
      throw new Error(`topics without leaders after ${timeoutMs} ms: ${topics.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
