// One chaos scenario's world: its own broker (killable, restartable on the same data), the
// shared registry behind the scenario's own proxy, its own sandbox process, topics and group,
// replicas under a supervisor, and the in-flight poller. finish() waits until the group's
// commits reach the end offsets (or the deadline), stops everything gracefully and reconciles.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { Kafka, logLevel } from 'kafkajs';
import { inject } from 'vitest';
import { defaultInfrastructureOptions } from '../../../deploy/local/infra.ts';
import {
  startKafkaCluster,
  startRestartableKafkaBroker,
  type RestartableBroker,
} from '../../../deploy/local/kafka-broker.ts';
import type { RunDir } from '../../../deploy/local/processes.ts';
import { createTopicsWithLeaders } from '../../../src/kafka/topics.ts';
import { uniqueName } from '../../support/kafka.ts';
import { InFlightPoller } from './in-flight-poller.ts';
import type { Expected, InputRecord } from './input.ts';
import { committedBehind, reconcile, type Disruption, type Reconciliation } from './reconcile.ts';
import { startRegistryProxy, type RegistryProxy } from '../../support/registry-proxy.ts';
import { ReplicaSet } from './replicas.ts';
import { CLI, NODE, closeRunDir, scenarioRunDir } from './run-dir.ts';
import { startSandboxProcess, type SandboxProcess } from './sandbox-process.ts';

// The broker of the whole test set (PARTNER_ENRICH_KAFKA_VERSIONS' first, 4.4.0 by default), so
// the chaos suite runs against Kafka 3.9 as the integration tests do.
export const KAFKA_VERSION = defaultInfrastructureOptions().kafkaVersions[0] as string;
export const SANDBOX_ORGS = 5_000;
export const SANDBOX_SEED = 7;

export interface ScenarioOptions {
  name: string;
  /** Nodes of the scenario's Kafka cluster (1 by default; with more, topics have 3 replicas at most). */
  brokers?: number;
  partitions: number;
  maxInFlightRecords: number;
  /** More PARTNER_ENRICH_* settings for the replicas. */
  env?: Record<string, string>;
  /** Topic configs created before `topics create` (which leaves existing topics alone). */
  topicConfigs?: Partial<Record<'input' | 'deadLetters', { name: string; value: string }[]>>;
}

export interface ScenarioReport extends Reconciliation {
  scenario: string;
  seconds: number;
  maxInFlightRecords: number;
  inFlightPeak: number;
  inFlightSamples: number;
  processes: {
    replicaStarts: number;
    supervisorRestarts: number;
    pipelineKills: number;
    selfExits: { replica: string; code: number | null; signal: string | null; lastError?: string }[];
    cleanExitsWhileWanted: number;
    sigtermExitCodes: (number | null)[];
    brokerKills: number;
  };
  disruptions: Disruption[];
  sandbox: { bulkSubmissions: number; restarts: number; injected: Record<string, number> };
  /** Measurements a scenario adds (throughput, quota windows). */
  measured: Record<string, unknown>;
}

export class Scenario {
  readonly options: ScenarioOptions;
  readonly runDir: RunDir;
  /** The cluster's nodes; `broker` is the first (a one-node cluster's only one). */
  readonly brokers: RestartableBroker[];
  readonly bootstrap: string;
  readonly proxy: RegistryProxy;
  readonly sandbox: SandboxProcess;
  readonly kafka: Kafka;
  /** Reaches the registry directly, never through the proxy. */
  readonly registry: SchemaRegistry;
  readonly topics: Record<'input' | 'matches' | 'events' | 'storage' | 'deadLetters' | 'state', string>;
  readonly groupId: string;
  readonly replicas: ReplicaSet;
  readonly expected = new Map<string, Expected>();
  /** What the scenario measured itself, kept in its report. */
  readonly measured: Record<string, unknown> = {};
  readonly #disruptions: Disruption[] = [];
  readonly #poller: InFlightPoller;
  readonly #started = Date.now();

  private constructor(
    options: ScenarioOptions,
    parts: { runDir: RunDir; brokers: RestartableBroker[]; proxy: RegistryProxy; sandbox: SandboxProcess },
  ) {
    this.options = options;
    ({ runDir: this.runDir, brokers: this.brokers, proxy: this.proxy, sandbox: this.sandbox } = parts);
    this.bootstrap = this.brokers.map((node) => node.bootstrap).join(',');
    this.kafka = new Kafka({
      clientId: `chaos-${options.name}`,
      brokers: this.bootstrap.split(','),
      logLevel: logLevel.NOTHING,
      retry: { retries: 10, initialRetryTime: 200 },
    });
    this.registry = new SchemaRegistry({ host: inject('chaosRegistryUrl') });
    const base = uniqueName(options.name);
    this.topics = {
      input: `${base}.in`,
      matches: `${base}.matches`,
      events: `${base}.events`,
      storage: `${base}.storage`,
      deadLetters: `${base}.dlq`,
      state: `${base}.state`,
    };
    this.groupId = `${base}-group`;
    this.replicas = new ReplicaSet({ runDir: this.runDir, env: this.env() });
    this.#poller = new InFlightPoller(() => this.replicas.metricsPorts);
  }

  static async start(options: ScenarioOptions): Promise<Scenario> {
    const runDir = await scenarioRunDir(inject('chaosRunPath'));
    const nodes = options.brokers ?? 1;
    const [brokers, proxy, sandbox] = await Promise.all([
      nodes === 1
        ? startRestartableKafkaBroker(runDir, KAFKA_VERSION).then((broker) => [broker])
        : startKafkaCluster(runDir, KAFKA_VERSION, nodes).then((cluster) => cluster.nodes),
      startRegistryProxy(inject('chaosRegistryUrl')),
      startSandboxProcess(runDir, { orgs: SANDBOX_ORGS, seed: SANDBOX_SEED }),
    ]);
    const scenario = new Scenario(options, { runDir, brokers, proxy, sandbox });
    await scenario.#createTopics();
    scenario.#poller.start();
    return scenario;
  }

  /** The replicas' configuration. */
  env(): Record<string, string> {
    const t = this.topics;
    return {
      PARTNER_ENRICH_KAFKA__BROKERS: this.bootstrap,
      PARTNER_ENRICH_KAFKA__GROUP_ID: this.groupId,
      PARTNER_ENRICH_KAFKA__SESSION_TIMEOUT_MS: '10000',
      PARTNER_ENRICH_SCHEMA_REGISTRY__URL: this.proxy.url,
      PARTNER_ENRICH_TOPICS__INPUT: t.input,
      PARTNER_ENRICH_TOPICS__MATCHES: t.matches,
      PARTNER_ENRICH_TOPICS__EVENTS: t.events,
      PARTNER_ENRICH_TOPICS__STORAGE: t.storage,
      PARTNER_ENRICH_TOPICS__DEAD_LETTERS: t.deadLetters,
      PARTNER_ENRICH_TOPICS__STATE: t.state,
      PARTNER_ENRICH_TOPICS__PARTITIONS: String(this.options.partitions),
      PARTNER_ENRICH_TOPICS__REPLICATION_FACTOR: String(Math.min(this.brokers.length, 3)),
      PARTNER_ENRICH_REFDATA__BASE_URL: this.sandbox.url,
      PARTNER_ENRICH_REFDATA__API_KEY: 'sandbox-api-key',
      // Small bulks at a few requests a second: a scenario lasts long enough for its kills and
      // rebalances to land while bulks are in flight, and the 2-core machine keeps up.
      PARTNER_ENRICH_BATCHING__MAX_TASKS: '100',
      PARTNER_ENRICH_RATE_LIMIT__REQUESTS_PER_SECOND: '8',
      PARTNER_ENRICH_BATCHING__LINGER_MS: '100',
      PARTNER_ENRICH_BATCHING__MAX_IN_FLIGHT_RECORDS: String(this.options.maxInFlightRecords),
      PARTNER_ENRICH_POLLING__INITIAL_DELAY_MS: '50',
      PARTNER_ENRICH_POLLING__MAX_DELAY_MS: '500',
      PARTNER_ENRICH_RETRY__INITIAL_DELAY_MS: '100',
      PARTNER_ENRICH_RETRY__MAX_DELAY_MS: '2000',
      PARTNER_ENRICH_SHUTDOWN__GRACE_MS: '10000',
      PARTNER_ENRICH_OBSERVABILITY__LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? 'info',
      ...this.options.env,
    };
  }

  async #createTopics(): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const special = Object.entries(this.options.topicConfigs ?? {}).map(([role, configEntries]) => ({
        topic: this.topics[role as 'input' | 'deadLetters'],
        numPartitions: this.options.partitions,
        configEntries,
      }));
      if (special.length > 0) {
        await createTopicsWithLeaders(admin, special);
      }
    } finally {
      await admin.disconnect();
    }
    // As an operator does it: the command with the replicas' configuration.
    const child = spawn(NODE, [CLI, 'topics', 'create'], {
      env: { PATH: process.env.PATH ?? '', ...this.env() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    if (code !== 0) throw new Error(`topics create exited ${code}: ${output}`);
  }

  /** Produces the records (idempotent, acks=all) and remembers what each should become. */
  async produce(records: InputRecord[]): Promise<void> {
    for (const record of records) if (record.key !== null) this.expected.set(record.key, record.expected);
    const producer = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      for (let i = 0; i < records.length; i += 500) {
        const chunk = records.slice(i, i + 500).map(({ key, value }) => ({ key, value }));
        await producer.send({ topic: this.topics.input, acks: -1, messages: chunk });
      }
    } finally {
      await producer.disconnect();
    }
  }

  /** Records a disruption the scenario caused outside the replicas (broker, sandbox). */
  disrupted(what: string): void {
    this.#disruptions.push({ at: Date.now(), what });
  }

  /** The cluster's first node (a one-node cluster's only one). */
  get broker(): RestartableBroker {
    return this.brokers[0] as RestartableBroker;
  }

  async killBroker(node = this.broker): Promise<void> {
    await node.kill();
    this.disrupted('broker SIGKILL');
  }

  /** Resolves once the group has committed `share` of the input's end offsets. */
  async waitForProgress(share: number, timeoutMs = 180_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      for (;;) {
        const ends = await admin.fetchTopicOffsets(this.topics.input);
        const committed = await admin.fetchOffsets({ groupId: this.groupId, topics: [this.topics.input] });
        const total = ends.reduce((sum, p) => sum + Number(p.high), 0);
        const done = (committed[0]?.partitions ?? []).reduce(
          (sum, p) => sum + Math.max(Number(p.offset), 0),
          0,
        );
        if (done >= share * total) return;
        if (Date.now() > deadline)
          throw new Error(`${this.options.name}: ${done} of ${total} committed after ${timeoutMs} ms`);
        await sleep(500);
      }
    } finally {
      await admin.disconnect();
    }
  }

  /** Waits for the commits to reach the end offsets (until the deadline), stops the replicas, reconciles. */
  async finish(deadlineMs: number): Promise<ScenarioReport> {
    const deadline = Date.now() + deadlineMs;
    let reachedEnd = false;
    while (!reachedEnd && Date.now() < deadline) {
      const behind = await committedBehind(this.kafka, this.groupId, this.topics.input).catch(
        () => undefined,
      );
      reachedEnd = behind !== undefined && Object.values(behind).every((n) => n === 0);
      if (!reachedEnd) await sleep(1_000);
    }
    const seconds = (Date.now() - this.#started) / 1000;
    // Stuck: what the replicas last said is the evidence, and their folder is removed with the
    // scenario unless CHAOS_KEEP_LOGS is set.
    if (!reachedEnd)
      console.log(
        `${this.options.name}: not at the end offsets by the deadline\n${this.replicas.logTails(40)}`,
      );
    this.#poller.stop();
    await this.replicas.stopAll();
    const sandbox = await this.sandbox.collect();
    const disruptions = [...this.#disruptions, ...this.#replicaDisruptions()].sort((a, b) => a.at - b.at);
    const reconciliation = await reconcile({
      kafka: this.kafka,
      registry: this.registry,
      topics: this.topics,
      groupId: this.groupId,
      expected: this.expected,
      sandbox,
      disruptions,
    });
    const report: ScenarioReport = {
      scenario: this.options.name,
      seconds: Math.round(seconds),
      maxInFlightRecords: this.options.maxInFlightRecords,
      inFlightPeak: this.#poller.peak.inFlight,
      inFlightSamples: this.#poller.samples,
      ...reconciliation,
      processes: this.#processSummary(),
      disruptions: disruptions.map((d) => ({ at: d.at - this.#started, what: d.what })),
      sandbox: {
        bulkSubmissions: sandbox.bulkSubmissions,
        restarts: sandbox.restarts,
        injected: {
          serverErrors: sandbox.injectedServerErrors,
          throttles: sandbox.injectedThrottles,
          resets: sandbox.injectedResets,
        },
      },
      measured: this.measured,
    };
    await writeReport(report);
    return report;
  }

  #replicaDisruptions(): Disruption[] {
    return this.replicas.events.flatMap((e) =>
      e.type === 'exit' && (e.requested === 'SIGKILL' || e.requested === null)
        ? [{ at: e.at, what: `${e.replica} ${e.requested ?? `exit ${e.code ?? e.signal}`}` }]
        : [],
    );
  }

  #processSummary(): ScenarioReport['processes'] {
    const selfExits = this.replicas.selfExits();
    const requested = this.replicas.requestedExits();
    return {
      replicaStarts: this.replicas.events.filter((e) => e.type === 'start').length,
      supervisorRestarts: this.replicas.restarts,
      pipelineKills: requested.filter((e) => e.requested === 'SIGKILL').length,
      selfExits: selfExits.map((e) => ({
        replica: e.replica,
        code: e.code,
        signal: e.signal,
        ...(e.lastError === undefined ? {} : { lastError: e.lastError }),
      })),
      cleanExitsWhileWanted: selfExits.filter((e) => e.code === 0 && e.wanted).length,
      sigtermExitCodes: requested.filter((e) => e.requested === 'SIGTERM').map((e) => e.code),
      brokerKills: this.#disruptions.filter((d) => d.what === 'broker SIGKILL').length,
    };
  }

  async close(): Promise<void> {
    this.#poller.stop();
    await this.replicas.stopAll(5_000);
    await Promise.allSettled([
      this.sandbox.stop(),
      ...this.brokers.map((node) => node.stop()),
      this.proxy.close(),
    ]);
    await closeRunDir(this.runDir);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function writeReport(report: ScenarioReport): Promise<void> {
  const dir = join('test-results', 'chaos');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `${report.scenario}.json`), `${JSON.stringify(report, null, 2)}\n`);
  console.log(formatReport(report));
}

export function formatReport(r: ScenarioReport): string {
  const p = r.payment;
  const rows: [string, string][] = [
    ['run time', `${r.seconds} s`],
    [
      'input records',
      `${r.input.records} (valid ${r.input.match}, malformed ${r.input.deadLetter}, oversize ${r.input.oversize})`,
    ],
    ['LOST', `${r.lost}${r.lost > 0 ? ` e.g. ${r.lostSample.slice(0, 5).join(', ')}` : ''}`],
    ['valid records dead-lettered', JSON.stringify(r.validDeadLettered)],
    ['malformed records matched', String(r.malformedMatched)],
    ['duplicate positions / extra outputs', `${r.duplicates.positions} / ${r.duplicates.extraOutputs}`],
    ['duplicates by cause', JSON.stringify(r.duplicates.byCause)],
    ['commits at end offsets', `${r.commits.atEnd} (behind ${JSON.stringify(r.commits.behind)})`],
    ['bulks / tasks paid', `${p.bulks} / ${p.tasks}`],
    ['lookups needed / distinct contents paid', `${p.lookupsNeeded} / ${p.distinctContentsPaid}`],
    ['tasks beyond needed', String(p.tasksBeyondNeeded)],
    ['quota consumed / beyond needed', `${p.quotaConsumed} / ${p.quotaBeyondNeeded}`],
    ['paid twice (contents) by cause', `${p.paidTwice.contents} ${JSON.stringify(p.paidTwice.byCause)}`],
    [
      'kill windows: bulks (tasks again) / consumes (units)',
      `${p.killWindows.bulks} (${p.killWindows.tasksAgain}) / ${p.killWindows.consumes} (${p.killWindows.units})`,
    ],
    [
      'versions: valid records / distinct contents',
      `${r.lookups.validRecords} / ${r.lookups.distinctContents}`,
    ],
    ['lookups needed (by MatchResults) / tasks', `${r.lookups.needed} / ${r.lookups.tasks}`],
    ['tasks beyond needed by cause', JSON.stringify(r.lookups.beyondNeeded)],
    ['quota beyond needed + retry + restart', String(r.lookups.quotaBeyondNeeded)],
    [
      'bulks / tasks the restarted service forgot',
      `${r.lookups.forgotten.bulks} / ${r.lookups.forgotten.tasks}`,
    ],
    [
      'results of another content / reused never looked up',
      `${r.lookups.resultsOfOtherContent} / ${r.lookups.reusedNeverLookedUp}`,
    ],
    ['peak in flight / limit', `${r.inFlightPeak} / ${r.maxInFlightRecords} (${r.inFlightSamples} samples)`],
    ['pipeline SIGKILLs / broker kills', `${r.processes.pipelineKills} / ${r.processes.brokerKills}`],
    ['exits by itself', JSON.stringify(r.processes.selfExits)],
    ['supervisor restarts', String(r.processes.supervisorRestarts)],
    ['SIGTERM exit codes', JSON.stringify(r.processes.sigtermExitCodes)],
    ['injected faults', JSON.stringify(r.sandbox.injected)],
    ...Object.entries(r.measured).map(([k, v]): [string, string] => [k, JSON.stringify(v)]),
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return [`chaos reconciliation: ${r.scenario}`, ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)].join(
    '\n',
  );
}
