import { PartnerEnrichError, type ErrorOptions } from '../errors.ts';

export const SINK_ERROR_CODES = [
  /**
   * An output message larger than its topic accepts (max.message.bytes); it was not sent.
   * details: output, bytes, limit. Not retried: the same record gives the same message.
   */
  'OUTPUT_TOO_LARGE',
  /**
   * The broker refused a record batch as larger than its topic accepts, though each batch was
   * cut to the max.message.bytes last read (at start, then every 15 s): the topic's limit (or the
   * broker's message.max.bytes) was lowered since, or after its messages were checked. Fatal
   * (exactly-once too: the transaction is aborted): `run` exits 1, the restart reads the current
   * limits and dead-letters what can no longer fit (OUTPUT_TOO_LARGE); nothing is committed.
   * details: limits (those last read).
   */
  'OUTPUT_REFUSED_AS_TOO_LARGE',
  /**
   * Output records addressed to a partition the producer's metadata does not know (storage
   * partition N of input partition N, the topic's partitions added while running) were
   * left out of the request by the Kafka client, without an error. Fatal: `run` exits 1, the
   * restart reads the topics' metadata afresh and writes them; nothing of theirs is committed.
   * details: missing (`topic:partition` each).
   */
  'OUTPUT_PARTITION_UNKNOWN',
] as const;

export type SinkErrorCode = (typeof SINK_ERROR_CODES)[number];

export class SinkError extends PartnerEnrichError<SinkErrorCode> {
  constructor(code: SinkErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, { ...options, canRetry: false });
  }
}

export const KAFKA_ERROR_CODES = [
  /**
   * At start: no broker of `kafka.brokers` answered, or, with `oauthbearer`, the token endpoint
   * gave no token; `run` exits non-zero for its supervisor to retry.
   */
  'KAFKA_UNAVAILABLE',
  /**
   * At start: the broker refused the SASL credentials of `kafka.sasl` (wrong user name or
   * password, or a mechanism the user has no credentials for), or, with `oauthbearer`, the
   * token endpoint refused the client or the broker its token; exit 2. details: none.
   */
  'KAFKA_AUTHENTICATION_FAILED',
  /**
   * The internal state topic (bulk ledger) could not be written within the client's retries:
   * the pipeline stops without committing, records are read again after a restart. From
   * `rerun`: a job or request not written; `rerun start` (and `run`'s schedule at a slot) also
   * when other starts of the same input topic fenced it START_ATTEMPTS times in a row.
   */
  'STATE_WRITE_FAILED',
  /**
   * A partition new to this member: the state topic (bulk ledger) could not be read to its end
   * (the broker away past the client's retries, or the follower still behind after 60 s).
   * Going on could pay again for bulks the partition's former owner recorded: the pipeline
   * stops without committing, `run` exits 1; the restart reads the ledger again.
   */
  'LEDGER_CATCH_UP_FAILED',
  /**
   * A record of the internal state topic that partner-enrich did not write: its value is not
   * JSON, or not a bulk ledger entry or rerun record: written there by something else. At start (`run`, the `rerun`
   * commands) the command fails, exit 2; while `run` runs, its follower stops and the pipeline
   * fails without committing, exit 1. details: topic, partition, offset, key.
   */
  'STATE_RECORD_UNREADABLE',
  /**
   * Exactly-once: the input partition's transactional producer was fenced (its partition's next
   * owner, or this member after a restart, started a producer with the same transactional id)
   * or its transaction was aborted by the broker. Nothing of the transaction is visible; the
   * member takes the partition for revoked and its records are processed again by its owner.
   */
  'TRANSACTION_FENCED',
  /**
   * Exactly-once: a transaction failed otherwise (broker away past the client's retries). The
   * pipeline stops without committing, `run` exits 1; what was not committed is processed again.
   */
  'TRANSACTION_FAILED',
  /**
   * A command's topic does not exist (`dlq replay`: the dead-letter or the input topic; `run` at
   * start: any of its six, details.missing); nothing was written. `run`: a topic of the pipeline
   * deleted while running, confirmed by the broker's metadata once a write or fetch stalled, or
   * by its look at its topics every 15 s (topic-watch.ts); fatal, nothing is committed.
   * `partner-enrich topics create` creates the pipeline's topics. details: topic.
   */
  'TOPIC_MISSING',
  /**
   * `run`: a topic of the pipeline deleted and made anew under the same name while running (or
   * its log cut back): the broker acknowledged a write at an offset no later than one it had
   * acknowledged before (topic-watch.ts). Fatal, nothing is committed; the new topic holds none
   * of the old one's records. details: topic, partition, offset, acknowledged.
   */
  'TOPIC_RECREATED',
  /**
   * `topics create`: an existing topic does not fit the pipeline (the storage topic's partition
   * count differs from the input's; the storage or state topic is not compacted). Nothing was
   * created or changed. details: problems.
   */
  'TOPIC_MISCONFIGURED',
  /**
   * `topics create`: the broker refused to create a topic (a replication factor above its
   * broker count, a policy); the topics it did not refuse were created. details: refused
   * ({ topic, reason }), created.
   */
  'TOPIC_CREATE_REFUSED',
  /**
   * `dlq replay`: a dead letter whose copy alone is larger than the input topic's
   * max.message.bytes: no request can carry it, so it is not sent; the others are. One line
   * each, and the command exits 2. details: deadLetter (`topic:partition:offset`), bytes, limit.
   */
  'REPLAY_RECORD_TOO_LARGE',
  /**
   * The broker refused the configured principal an operation its ACLs do not grant, or named no
   * coordinator for a consumer group or transactional id (kafkajs drops the broker's refusal of
   * FindCoordinator and says only that). The message names the operation and the resource to
   * grant (docs/OPERATIONS.md, Kafka ACLs). details: operation, resource, refusal.
   */
  'KAFKA_NOT_AUTHORIZED',
] as const;

export type KafkaErrorCode = (typeof KAFKA_ERROR_CODES)[number];

export class KafkaError extends PartnerEnrichError<KafkaErrorCode> {
  constructor(code: KafkaErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, { ...options, canRetry: code === 'KAFKA_UNAVAILABLE' });
  }
}

type Wrapping = {
  name?: unknown;
  type?: unknown;
  message?: unknown;
  cause?: unknown;
  originalError?: unknown;
};

/** Whether `error`, or an error it wraps (kafkajs's `cause` and `originalError`), passes `test`. */
export function anyCause(error: unknown, test: (error: Wrapping) => boolean): boolean {
  for (let e = error as Wrapping | undefined; e; e = (e.originalError ?? e.cause) as Wrapping | undefined)
    if (test(e)) return true;
  return false;
}

/** Whether `error` or one it wraps is a broker error of one of `types` (kafkajs's names, such as MESSAGE_TOO_LARGE). */
export const isBrokerError = (error: unknown, types: ReadonlySet<string>): boolean =>
  anyCause(error, (e) => typeof e.type === 'string' && types.has(e.type));

/** Errors by which the broker says a newer producer holds the transactional id. */
const FENCED = new Set(['INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED']);

/** Whether `error` (or what it wraps) says the producer was fenced. */
export const isFenced = (error: unknown): boolean =>
  isBrokerError(error, FENCED) ||
  // kafkajs knows no code 90 (PRODUCER_FENCED, newer brokers' answer) and wraps some errors.
  anyCause(error, (e) =>
    /PRODUCER_FENCED|INVALID_PRODUCER_EPOCH|Unknown error code 90\b|with an old epoch/.test(
      String(e.message),
    ),
  );

/** The broker's refusals of a record batch over max.message.bytes (a batch, or a request's batches). */
const TOO_LARGE = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);

/**
 * OUTPUT_REFUSED_AS_TOO_LARGE when `error` is the broker's refusal of a batch cut to the
 * limits last read (`limit`), for a request that carried `topics`; undefined otherwise.
 */
export function refusedAsTooLarge(
  error: unknown,
  topics: Iterable<string>,
  limit: (topic: string) => number,
): SinkError | undefined {
  if (!isBrokerError(error, TOO_LARGE)) return undefined;
  const names = [...new Set(topics)];
  const limits = Object.fromEntries(names.map((topic) => [topic, limit(topic)]));
  return new SinkError(
    'OUTPUT_REFUSED_AS_TOO_LARGE',
    `the broker refused a record batch as too large for ${names.join(', ')}: max.message.bytes ` +
      `was lowered below the limits last read (${JSON.stringify(limits)}); a restart reads them again`,
    { cause: error, details: { limits } },
  );
}

/** An ACL a request needs: its operation and resource as kafka-acls names them (`Topic partners`, `Group prefix x-`). */
export interface Permission {
  operation: string;
  resource: string;
}

/** What a request needed, per kind of resource the broker may refuse it on. */
export interface Needed {
  topic?: Permission;
  group?: Permission;
  transactionalId?: Permission;
}

/** `operation` on each of `topics`, named as one resource (`Topic a, b`). */
export const onTopics = (operation: string, topics: string | readonly string[]): Needed => ({
  topic: { operation, resource: `Topic ${[topics].flat().join(', ')}` },
});

/** Write on a producer's transactional id. */
export const onTransactionalId = (id: string): Needed => ({
  transactionalId: { operation: 'Write', resource: `TransactionalId ${id}` },
});

const REFUSALS: Record<string, keyof Needed> = {
  TOPIC_AUTHORIZATION_FAILED: 'topic',
  GROUP_AUTHORIZATION_FAILED: 'group',
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 'transactionalId',
};

/** kafkajs's error when every broker refused FindCoordinator: the refusal itself is dropped. */
const NO_COORDINATOR = 'KafkaJSGroupCoordinatorNotFound';

/**
 * KAFKA_NOT_AUTHORIZED when `error` (or what it wraps) is the broker's refusal of what `needed`
 * names; undefined otherwise.
 */
export function notAuthorized(error: unknown, needed: Needed): KafkaError | undefined {
  let refusal: string | undefined;
  anyCause(error, (e) => {
    if (typeof e.type === 'string' && e.type in REFUSALS) refusal = e.type;
    else if (e.name === NO_COORDINATOR) refusal = 'NO_COORDINATOR';
    return refusal !== undefined;
  });
  if (refusal === undefined) return undefined;
  const permission =
    refusal === 'NO_COORDINATOR'
      ? (needed.group ?? needed.transactionalId)
      : needed[REFUSALS[refusal] as keyof Needed];
  if (permission === undefined) return undefined;
  const { operation, resource } = permission;
  const how =
    refusal === 'NO_COORDINATOR'
      ? `the broker named no coordinator for ${resource}, as it answers when ${operation} on it is not granted`
      : `the broker refused ${operation} on ${resource} (${refusal})`;
  return new KafkaError(
    'KAFKA_NOT_AUTHORIZED',
    `${how}: grant the principal ${operation} on ${resource} (docs/OPERATIONS.md, Kafka ACLs)`,
    { cause: error, details: { operation, resource, refusal } },
  );
}
