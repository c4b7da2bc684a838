// Composition root: builds the pipeline from the validated configuration, with Kafka or
// files at its ends. The commands (run, demo) only choose the ends and what to watch.
import { mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { Kafka, logLevel, type KafkaConfig } from 'kafkajs';
import { BulkLedger, memoryLedgerStore } from '../bulk/bulk-ledger.ts';
import {
  adoptLedgerJournal,
  JOURNAL_DIR,
  journaledLedgerStore,
  LedgerJournal,
} from '../bulk/ledger-journal.ts';
import { BulkRunner } from '../bulk/bulk-runner.ts';
import { refDataBulkApi } from '../bulk/refdata-bulk-api.ts';
import { isPemText, redactUrl, type Config } from '../config/index.ts';
import { checkInputNotOutput, NdjsonSink } from '../files/ndjson-sink.ts';
import { NdjsonSource } from '../files/ndjson-source.ts';
import {
  REGISTRY_REQUEST_TIMEOUT_MS,
  registerTopicEncoder,
  registryEndpoint,
} from '../kafka/avro-encoder.ts';
import { probeBrokers } from '../kafka/broker-probe.ts';
import { saslOptions } from '../kafka/sasl.ts';
import { installCompressionCodecs } from '../kafka/compression-codecs.ts';
import { kafkajsLogCreator, type KafkaLog } from '../kafka/kafkajs-log.ts';
import { KafkaSink } from '../kafka/kafka-sink.ts';
import { KafkaSource } from '../kafka/kafka-source.ts';
import { KafkaLedgerStore } from '../kafka/ledger-store.ts';
import { KafkaPartitionTransactions } from '../kafka/partition-transactions.ts';
import { KafkaRerunJobStore } from '../kafka/rerun-store.ts';
import { TopicReaders } from '../kafka/topic-reader.ts';
import { KafkaStateChangelog } from '../kafka/state-changelog.ts';
import { assertTopicsExist } from '../kafka/topic-presence.ts';
import { TopicWatch } from '../kafka/topic-watch.ts';
import { pipelineTopicNames } from '../kafka/topics.ts';
import { toLookupTask } from '../mapping/lookup-task.ts';
import { loadMappingFile } from '../mapping/mapping-file.ts';
import { createLogger, type Logger } from '../observability/logger.ts';
import { Pipeline, type PipelineOptions } from '../pipeline/pipeline.ts';
import type { OutputSink, PipelineObserver, RecordSource, TransactionalOutputs } from '../pipeline/ports.ts';
import { QuotaGate } from '../quota/quota-gate.ts';
import { RerunQuota } from '../quota/rerun-quota.ts';
import { liveHeadroom } from '../rerun/live-headroom.ts';
import { RerunExecutor } from '../rerun/rerun-executor.ts';
import type { RerunJobStore } from '../rerun/rerun-job.ts';
import { RequestLimiter } from '../quota/request-limiter.ts';
import { usageQuotaCheck } from '../quota/usage-quota-check.ts';
import { RefDataClient, retryChannel } from '../refdata/index.ts';
import { isPartnerEnrichError } from '../errors.ts';
import { avroPartnerDecoder, jsonPartnerDecoder, type PartnerDecoder } from '../serde/partner-decoders.ts';
import { PartnerState } from '../state/partner-state.ts';
import { reapStateDirs, removePrivateStateDir } from '../state/state-dir-lock.ts';

/**
 * The client of the reference data service. Its HTTP retries follow `retry.*`, the same policy
 * as the pipeline's: the client repeats what is safe to repeat, the pipeline only waits out a
 * service that stays away, so no budget multiplies another. `logger` hears of OAuth token
 * refreshes that failed while the token in hand still served.
 */
export function createRefDataClient(
  refdata: Config['refdata'],
  retry: Config['retry'],
  logger?: Logger,
): RefDataClient {
  // Without the lookup API's credential (a command that needs only the data exchange API), the
  // client has no base root: a call to it fails as not configured, not as refused.
  const serviceCredential =
    refdata.auth === 'apiKey' ? refdata.apiKey !== undefined : !!(refdata.clientId && refdata.clientSecret);
  return new RefDataClient({
    roots: {
      ...(serviceCredential ? { base: refdata.baseUrl } : {}),
      usage: refdata.usageUrl,
      ...(refdata.auth === 'oauth' ? { auth: refdata.authUrl } : {}),
      // The data exchange root cannot be called without its basic credential, so it comes with the password.
      ...(refdata.dataExchangePassword ? { dataExchange: refdata.dataExchangeUrl } : {}),
    },
    credentials: {
      ...(refdata.auth === 'apiKey' ? { apiKey: refdata.apiKey } : {}),
      ...(refdata.auth === 'oauth' && refdata.clientId && refdata.clientSecret
        ? { clientCredentials: { clientId: refdata.clientId, clientSecret: refdata.clientSecret } }
        : {}),
      ...(refdata.dataExchangePassword
        ? {
            dataExchangeBasicAuth: {
              username: refdata.credentialUsername,
              password: refdata.dataExchangePassword,
            },
          }
        : {}),
      credentialUsername: refdata.credentialUsername,
    },
    timeoutMs: refdata.timeoutMs,
    retry: {
      maxAttempts: retry.maxAttempts,
      baseDelayMs: retry.initialDelayMs,
      maxDelayMs: retry.maxDelayMs,
    },
    ...(logger
      ? {
          onTokenRefreshFailed: (error: unknown) =>
            logger.warn(
              { authUrl: redactUrl(refdata.authUrl), clientId: refdata.clientId },
              `OAuth token of the reference data service not refreshed, asked again after a backoff; the one in hand serves meanwhile: ${(error as Error).message}`,
            ),
        }
      : {}),
  });
}

/** PEM material is given inline or as the path of a file, which the configuration checked. */
const pem = (value: string): string => (isPemText(value) ? value : readFileSync(value, 'utf8'));

/** `log` takes kafkajs's own entries (kafkajs-log.ts). */
export function kafkaClientConfig(kafka: Config['kafka'], log: KafkaLog): KafkaConfig {
  const ssl: KafkaConfig['ssl'] =
    typeof kafka.ssl === 'boolean'
      ? kafka.ssl
      : {
          rejectUnauthorized: kafka.ssl.rejectUnauthorized,
          ...(kafka.ssl.ca ? { ca: [pem(kafka.ssl.ca)] } : {}),
          ...(kafka.ssl.cert ? { cert: pem(kafka.ssl.cert) } : {}),
          ...(kafka.ssl.key ? { key: pem(kafka.ssl.key) } : {}),
        };
  return {
    clientId: kafka.clientId,
    brokers: kafka.brokers,
    ssl,
    // A new object: kafkajs stores its authentication provider on the object it is given, and
    // the configuration is frozen (every SASL connection failed, "object is not extensible").
    ...(kafka.sasl ? { sasl: saslOptions(kafka.sasl, log.logger) } : {}),
    connectionTimeout: kafka.connectionTimeoutMs,
    // kafkajs's default gives up after about 10 s; a broker restart or a leader election
    // takes longer. About 80 s of retries (300 ms doubling, capped at 10 s) ride out such an
    // outage without failing an output write or crashing the consumer; longer ones end the
    // process, to be restarted by its supervisor.
    retry: { initialRetryTime: 300, maxRetryTime: 10_000, retries: 12 },
    logLevel: logLevel.ERROR,
    logCreator: kafkajsLogCreator(log),
  };
}

/** A one-shot command's: the configured level, on stdout, kafkajs's entries as detail. */
const commandLog = (config: KafkaClientSettings): KafkaLog => ({
  logger: createLogger({ level: config.observability.logLevel }),
  level: 'debug',
});

type KafkaClientSettings = Pick<Config, 'kafka' | 'observability'>;

export function createKafka(config: KafkaClientSettings, log = commandLog(config)): Kafka {
  installCompressionCodecs();
  return new Kafka(kafkaClientConfig(config.kafka, log));
}

/**
 * The cluster's client once one of its brokers answered: a command started against a cluster
 * that is not there fails within seconds (KAFKA_UNAVAILABLE), not after the client's retries.
 */
export async function reachableKafka(config: KafkaClientSettings, log = commandLog(config)): Promise<Kafka> {
  await probeBrokers(kafkaClientConfig(config.kafka, log));
  return createKafka(config, log);
}

export function createSchemaRegistry(settings: Config['schemaRegistry']): SchemaRegistry {
  const registry = registryEndpoint(settings);
  return new SchemaRegistry({
    host: registry.url,
    ...(registry.username !== undefined && registry.password !== undefined
      ? { auth: { username: registry.username, password: registry.password } }
      : {}),
    // The client sets no time limit: a registry that took the connection and never answered
    // (a stopped JVM, a black-holing proxy) held its records for good, /readyz 200 meanwhile.
    // Timed out, the read fails like an unreachable registry's: waited out, the partition named.
    middlewares: [
      () => ({
        prepareRequest: async (next) => (await next()).enhance({ timeout: REGISTRY_REQUEST_TIMEOUT_MS }),
      }),
    ],
  });
}

export function pipelineOptions(config: Config): PipelineOptions {
  return {
    maxTasks: config.batching.maxTasks,
    rerunMaxTasks: config.rerun.maxBulkTasks,
    lingerMs: config.batching.lingerMs,
    maxInFlightRecords: config.batching.maxInFlightRecords,
    maxConcurrentBulks: config.batching.maxConcurrentBulks,
    skipUnchanged: config.skipUnchanged,
    retry: config.retry,
    thresholds: {
      fullMatch: config.lookup.fullMatchThreshold,
      maybeMatch: config.lookup.maybeMatchThreshold,
    },
    storageId: config.storageId,
    commitIntervalMs: config.delivery === 'exactly-once' ? config.exactlyOnce.commitIntervalMs : 1000,
    // Longer than one request to the service can take, twice: a live submitter renews well before.
    submissionLeaseMs: 2 * config.refdata.timeoutMs,
    requestTimeoutMs: config.refdata.timeoutMs,
    stateCheckpointIntervalMs: config.state.checkpointIntervalMs,
    // A member fenced because its partitions moved learns of the rebalance at its next
    // heartbeat, well within one session timeout: past it, the fencing had no rebalance.
    fencedIdleMs: config.kafka.sessionTimeoutMs,
  };
}

interface Ends {
  source: RecordSource;
  sink: OutputSink;
  decoder: PartnerDecoder;
  ledger: BulkLedger;
  state: PartnerState;
  /** Exactly-once outputs (Kafka, delivery exactly-once). */
  transactions?: TransactionalOutputs & { closeAll(): Promise<void> };
  /** Where rerun jobs are kept, and the input topic's partitions; without it (files) no rerun runs. */
  reruns?: { jobs: RerunJobStore; inputTopic: string; partitionCount: number };
}

export interface Enrichment {
  pipeline: Pipeline;
  source: RecordSource;
  sink: OutputSink;
  limiter: RequestLimiter;
  /** Partner state of the partitions this replica owns. */
  state: PartnerState;
  /** Runs the reruns due on this replica's partitions (Kafka only). */
  reruns?: RerunExecutor;
  /** Where rerun jobs are kept, and the input topic's partitions (Kafka only). */
  rerunJobs?: { store: RerunJobStore; partitionCount: number };
  /**
   * Stops intake, lets in-flight work finish within the grace period, closes everything;
   * `closing` hears the name of each step as it begins.
   */
  stop(graceMs: number, closing?: (step: string) => void): Promise<{ abandoned: number }>;
}

function assemble(
  config: Config,
  ends: Ends,
  client: RefDataClient,
  observer: PipelineObserver,
  pipelineRef: { current?: Pipeline },
) {
  const limiter = new RequestLimiter(config.rateLimit);
  const onRetry = (message: unknown) => {
    const { status, delayMs } = message as { status?: number; delayMs: number };
    if (status === 429) limiter.throttled(delayMs);
  };
  retryChannel.subscribe(onRetry);
  const bulkApi = refDataBulkApi(client);
  const limitedBulkApi: typeof bulkApi = {
    createBulk: (tasks, parameters, timeoutMs) =>
      limiter.run(() => bulkApi.createBulk(tasks, parameters, timeoutMs)),
    readBulk: (id, page) => limiter.run(() => bulkApi.readBulk(id, page)),
  };
  const quotaCheck = usageQuotaCheck(client, {
    serviceTechnicalKey: config.quota.serviceTechnicalKey,
    organizationId: config.refdata.organizationId,
    ...(config.refdata.workspaceId ? { workspaceId: config.refdata.workspaceId } : {}),
    preferredUsername: config.refdata.credentialUsername,
  });
  const limitedQuotaCheck = {
    // Every OVER_LIMIT answer counts (the live gate's and the rerun's), not only the pause it
    // brings: an alert on an exhausted quota looks for them in each 5 minutes it lasts.
    consume: async (amount: number) => {
      const status = await limiter.run(() => quotaCheck.consume(amount));
      if (status === 'OVER_LIMIT') observer.quotaOverLimit?.();
      return status;
    },
    room: () => limiter.run(() => quotaCheck.room()),
  };
  const quota = config.quota.enabled
    ? new QuotaGate(
        limitedQuotaCheck,
        { initialDelayMs: config.quota.initialBackoffMs, maxDelayMs: config.quota.maxBackoffMs },
        {
          onExhausted: () => pipelineRef.current?.pause('quota'),
          onRestored: () => pipelineRef.current?.resume('quota'),
          onConsumed: (amount) => observer.quotaUsed?.(amount),
        },
      )
    : undefined;
  const rerunQuota = quota
    ? new RerunQuota(quota, limitedQuotaCheck, { retryMs: Math.max(50, config.quota.initialBackoffMs) })
    : undefined;
  const runner = new BulkRunner(limitedBulkApi, ends.ledger, {
    polling: { ...config.polling, maxPolls: 10_000 },
    lookup: {
      matchingThreshold: config.lookup.matchingThreshold,
      maxCandidates: config.lookup.maxCandidates,
      featuresOn: config.lookup.featuresOn,
      featuresOff: config.lookup.featuresOff,
      ...(config.lookup.dataSources ? { dataSources: config.lookup.dataSources } : {}),
      ...(config.lookup.configurationId ? { configurationId: config.lookup.configurationId } : {}),
    },
  });
  const pipeline = new Pipeline(
    {
      ...ends,
      toTask: toLookupTask,
      runner,
      ...(quota ? { quota, rerunQuota } : {}),
      observer,
    },
    { ...pipelineOptions(config), checkInputKeys: (ends.reruns?.partitionCount ?? 1) > 1 },
  );
  pipelineRef.current = pipeline;
  return { pipeline, limiter, rerunQuota, unsubscribe: () => retryChannel.unsubscribe(onRetry) };
}

function enrichment(
  config: Config,
  ends: Ends,
  client: RefDataClient,
  observer: PipelineObserver,
  closeExtra: () => Promise<void>,
): Enrichment {
  const { pipeline, limiter, rerunQuota, unsubscribe } = assemble(config, ends, client, observer, {});
  const reruns = ends.reruns
    ? new RerunExecutor({
        host: pipeline,
        jobs: ends.reruns.jobs,
        state: ends.state,
        inputTopic: ends.reruns.inputTopic,
        partitionCount: () => (ends.reruns as NonNullable<Ends['reruns']>).partitionCount,
        owner: () => ends.source.memberId,
        failed: (error) => pipeline.abort(error),
        headroom: liveHeadroom({ maxUtilization: config.rerun.maxEventLoopUtilization, recheckMs: 250 }),
        ...(rerunQuota ? { starting: () => void rerunQuota.learnWindow() } : {}),
      })
    : undefined;
  return {
    pipeline,
    source: ends.source,
    sink: ends.sink,
    limiter,
    state: ends.state,
    ...(reruns && ends.reruns
      ? { reruns, rerunJobs: { store: ends.reruns.jobs, partitionCount: ends.reruns.partitionCount } }
      : {}),
    async stop(graceMs, closing = () => {}) {
      closing('stopping reruns');
      await reruns?.stop();
      const result = await pipeline.stop(graceMs, closing);
      closing('closing the transactional producers');
      await ends.transactions?.closeAll();
      closing('closing the output producer');
      await ends.sink.close();
      unsubscribe();
      ends.state.close();
      closing("closing the state topic's followers and producers");
      await closeExtra();
      return result;
    },
  };
}

/** How long a start waits for the credentials' answer before going on without it. */
const CREDENTIAL_CHECK_MS = 15_000;

/**
 * The client, its credentials tried before any record is read: an API key or client
 * credentials the service refuses fail the start (REFDATA_AUTH_FAILED, exit 2). Found at the
 * first lookup instead, the replica was ready until a record came, and each record's quota
 * unit was consumed before its lookup was refused. Resolves with the refusal, never rejects:
 * asked while the rest starts, the answer is awaited at the end. Anything else (the service
 * away, no answer within CREDENTIAL_CHECK_MS) is ridden out later as any service fault is.
 */
function checkedRefDataClient(
  config: Config,
  logger?: Logger,
): { client: RefDataClient; refusal: Promise<unknown> } {
  const client = createRefDataClient(config.refdata, config.retry, logger);
  const refusal = client.authenticate({ signal: AbortSignal.timeout(CREDENTIAL_CHECK_MS) }).then(
    () => undefined,
    (error: unknown) =>
      isPartnerEnrichError(error) && error.code === 'REFDATA_AUTH_FAILED' ? error : undefined,
  );
  return { client, refusal };
}

async function throwRefusal(refusal: Promise<unknown>): Promise<void> {
  const error = await refusal;
  if (error) throw error;
}

/**
 * `files.input`, else the example input that comes with partner-enrich: found from this module,
 * as `demo` may be started from any directory (`src/cli` and the bundle's `dist/bin` are both
 * two levels below the package).
 */
export const inputFile = (files: Config['files']): string =>
  files.input ?? fileURLToPath(new URL('../../examples/partners.ndjson', import.meta.url));

/** Files at both ends: NDJSON PartnerRecords in, NDJSON outputs in a folder. */
export async function createFileEnrichment(config: Config, observer: PipelineObserver): Promise<Enrichment> {
  const { client, refusal } = checkedRefDataClient(config);
  const mapping = config.mapping.file ? await loadMappingFile(config.mapping.file) : undefined;
  const decoder = mapping ? mapping.decoder : jsonPartnerDecoder();
  const ledger = new BulkLedger(memoryLedgerStore());
  // Each run starts afresh, as its output files do; the state lives beside them.
  const stateDir = join(config.files.outputDir, 'state');
  const input = inputFile(config.files);
  // Before anything is truncated or removed: the input may be a file of the output directory.
  await checkInputNotOutput(input, config.files.outputDir, [stateDir]);
  await throwRefusal(refusal);
  // Made first: an output directory that cannot be is reported as such, not by the state's removal.
  const sink = await NdjsonSink.create(config.files.outputDir);
  await rm(stateDir, { recursive: true, force: true });
  const ends: Ends = {
    source: new NdjsonSource(input, config.files.maxRecordBytes),
    sink,
    decoder,
    ledger,
    state: new PartnerState({ dir: stateDir }),
  };
  return enrichment(config, ends, client, observer, async () => {});
}

const PRIVATE_STATE_PREFIX = 'partner-enrich-state-';

/**
 * `state.dir`, or a private temporary directory removed at the end (every start restores in
 * full), but for a bulk ledger journal still holding writes. The private directories of
 * processes that ended on this machine are removed, their journals taken over for the same
 * state topic (another topic's stay, for its own pipeline's start): a supervisor's restart of
 * a `run` without `state.dir` republishes them as one with it does.
 */
function stateDir(config: Config): { dir: string; remove: () => Promise<void> } {
  if (config.state.dir) return { dir: config.state.dir, remove: async () => {} };
  const dir = mkdtempSync(join(tmpdir(), PRIVATE_STATE_PREFIX));
  // The new directory is not taken for a dead one: it is young and has no LOCK yet.
  reapStateDirs(tmpdir(), PRIVATE_STATE_PREFIX, {
    keep: JOURNAL_DIR,
    beforeRemove: (dead) => adoptLedgerJournal(dead, dir, config.topics.state),
  });
  // A journal still holding writes at exit (the state topic refused them until a fatal error).
  return { dir, remove: async () => removePrivateStateDir(dir, JOURNAL_DIR) };
}

/** Kafka at both ends, Avro through the schema registry, state in the internal topic. */
export async function createKafkaEnrichment(
  config: Config,
  observer: PipelineObserver,
  log?: KafkaLog,
): Promise<Enrichment> {
  const kafka = await reachableKafka(config, log);
  const { topics } = config;
  const topicNames = pipelineTopicNames(topics);
  const { client, refusal } = checkedRefDataClient(config, log?.logger);
  const registry = createSchemaRegistry(config.schemaRegistry);
  // What is open so far, closed (last first) when a later step fails: a failed start must
  // not leave clients behind that keep the process alive.
  const opened: (() => Promise<void>)[] = [];
  const orClose = async <T>(step: () => T | Promise<T>): Promise<T> => {
    try {
      return await step();
    } catch (error) {
      for (const close of opened.reverse()) await close().catch(() => {});
      throw error;
    }
  };
  // Every check that can refuse the start comes before the first write to the registry or the
  // broker: a start refused after them (a topic missing, the service refusing the credentials)
  // left the output subjects registered and the ledger's and reruns' consumer groups behind.
  await assertTopicsExist(kafka, topicNames);
  const readers = new TopicReaders(kafka, config.kafka.readerGroupPrefix);
  const changelog = new KafkaStateChangelog(readers, registry, topics.storage);
  await changelog.assertCopartitioned(topics.input);
  const mappingFile = config.mapping.file;
  const mapping = mappingFile ? await loadMappingFile(mappingFile) : undefined;
  const { dir, remove } = stateDir(config);
  opened.push(remove);
  const state = await orClose(() => new PartnerState({ dir, changelog }));
  opened.push(async () => state.close());
  await orClose(() => throwRefusal(refusal));
  const [matches, events, storageEncoder] = await orClose(() =>
    Promise.all([
      registerTopicEncoder(config.schemaRegistry, topics.matches, 'MatchResult'),
      registerTopicEncoder(config.schemaRegistry, topics.events, 'BusinessPartnerEvent'),
      registerTopicEncoder(config.schemaRegistry, topics.storage, 'StorageRecord'),
    ]),
  );
  const sink = new KafkaSink(kafka, {
    topics: {
      matches: topics.matches,
      events: topics.events,
      storage: topics.storage,
      deadLetters: topics.deadLetters,
    },
    encoders: { matches, events, storage: storageEncoder },
    compression: config.kafka.compression,
  });
  const ledgerStore = new KafkaLedgerStore(readers, topics.state);
  const rerunJobs = new KafkaRerunJobStore(readers, topics.state);
  opened.push(
    () => sink.close(),
    () => ledgerStore.close(),
    () => rerunJobs.close(),
  );
  await orClose(() => Promise.all([sink.connect(), ledgerStore.connect()]));
  // In the state directory PartnerState has locked: one process's journal.
  const journal = new LedgerJournal(dir, topics.state);
  const ledger = new BulkLedger(
    journaledLedgerStore(ledgerStore, journal, (counts) => observer.ledgerJournalRepublished?.(counts)),
  );
  await orClose(() => ledger.load());
  // Co-partitioned: the storage topic has as many partitions as the input topic.
  const partitionCount = (await orClose(() => changelog.offsets())).size;
  const source = new KafkaSource(kafka, {
    topic: topics.input,
    groupId: config.kafka.groupId,
    sessionTimeoutMs: config.kafka.sessionTimeoutMs,
  });
  const transactions =
    config.delivery === 'exactly-once'
      ? new KafkaPartitionTransactions(kafka, {
          groupId: config.kafka.groupId,
          transactionTimeoutMs: config.exactlyOnce.transactionTimeoutMs,
          compression: config.kafka.compression,
          encode: (message) => sink.encode(message),
          limit: (topic) => sink.limit(topic),
        })
      : undefined;
  const ends: Ends = {
    source,
    sink,
    ...(transactions ? { transactions } : {}),
    decoder: mapping
      ? mapping.decoder
      : config.inputFormat === 'json'
        ? jsonPartnerDecoder()
        : avroPartnerDecoder(registry),
    ledger,
    state,
    reruns: { jobs: rerunJobs, inputTopic: topics.input, partitionCount },
  };
  let stopWatching = () => {};
  let unfollow = async () => {};
  const built = await orClose(() =>
    enrichment(config, ends, client, observer, async () => {
      stopWatching();
      await unfollow();
      await ledgerStore.close();
      await rerunJobs.close();
      await remove();
    }),
  );
  // A follower stopped for good leaves this replica blind to what the others pay for: one that
  // cannot read at all fails the start; one that stops later fails the pipeline. Each start
  // waits for its follower's first fetch, which an idle state topic answers after the fetch
  // wait (500 ms): the ledger's and the reruns' followers start together, or a warm restart
  // spent a second on them (docs/BENCHMARKS.md, State).
  const followerStopped = Promise.withResolvers<never>();
  followerStopped.promise.catch(() => {});
  opened.push(async () => built.reruns?.stop());
  const [ledgerFollowed, rerunsStarted] = await Promise.allSettled([
    ledger.follow(followerStopped.reject),
    built.reruns?.start(),
  ]);
  if (ledgerFollowed.status === 'fulfilled') opened.push((unfollow = ledgerFollowed.value));
  for (const started of [ledgerFollowed, rerunsStarted])
    if (started.status === 'rejected') await orClose(() => Promise.reject(started.reason));
  followerStopped.promise.catch((error: Error) => built.pipeline.abort(error));
  // Idle, nothing is written or fetched that could stall on a deleted topic (topic-watch.ts).
  // Started last, the start can no longer fail: the enrichment's stop ends it.
  stopWatching = new TopicWatch(kafka).watch(topicNames, (error) => built.pipeline.abort(error));
  return built;
}
