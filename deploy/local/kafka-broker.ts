// Kafka in KRaft mode (each node broker and controller in one JVM), one node or a cluster, on
// 127.0.0.1, run from Maven Central's jars with `java -cp`.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { fetchKafka } from './artifacts.ts';
import { freePort, startService, stopProcess, waitUntil, type RunDir } from './processes.ts';

const run = promisify(execFile);

export interface LocalBroker {
  version: string;
  bootstrap: string;
}

/**
 * A broker as a least-privilege cluster runs it: SASL on the client listener and ACLs
 * enforced (StandardAuthorizer, nothing allowed where no ACL allows it). `admin` is its super
 * user; `users` are the other principals (name: password), with no ACL until one is created,
 * each able to log in with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512. OAUTHBEARER takes unsigned
 * tokens naming any principal (Kafka's unsecured validator).
 */
export interface Secured {
  admin: { username: string; password: string };
  users: Record<string, string>;
}

// The plain listener's, or the secured one's: client listener, its JAAS users, the authorizer.
// The controller listener stays plaintext: its principal (ANONYMOUS, broker and controller in
// one JVM) is a super user, and only the broker itself reaches that port.
function listenerSettings(port: number, controllerPort: number, secured?: Secured): string[] {
  if (!secured)
    return [
      `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
      `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
      'inter.broker.listener.name=PLAINTEXT',
      'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    ];
  const { admin, users } = secured;
  const logins = Object.entries({ ...users, [admin.username]: admin.password })
    .map(([user, password]) => `user_${user}="${password}"`)
    .join(' ');
  return [
    `listeners=SASL_PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=SASL_PLAINTEXT://127.0.0.1:${port}`,
    'inter.broker.listener.name=SASL_PLAINTEXT',
    'listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT',
    `sasl.enabled.mechanisms=PLAIN,${SCRAM_MECHANISMS.join(',')},OAUTHBEARER`,
    'sasl.mechanism.inter.broker.protocol=PLAIN',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule ' +
      `required username="${admin.username}" password="${admin.password}" ${logins};`,
    // SCRAM users' credentials are in the cluster's metadata, written by the storage format.
    ...SCRAM_MECHANISMS.map(
      (mechanism) =>
        `listener.name.sasl_plaintext.${mechanism.toLowerCase()}.sasl.jaas.config=` +
        'org.apache.kafka.common.security.scram.ScramLoginModule required;',
    ),
    // Kafka's default OAUTHBEARER validator: unsigned JWTs (alg none), the principal their `sub`,
    // refused once past their `exp`. Tests issue such tokens (test/support/oauth-issuer.ts);
    // what the client does with them (fetch, refresh, authenticate again) is the same.
    'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;',
    'authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    `super.users=User:${admin.username};User:ANONYMOUS`,
    'allow.everyone.if.no.acl.found=false',
  ];
}

const SCRAM_MECHANISMS = ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;

/** The storage format's arguments that give each of `secured`'s users SCRAM credentials (KIP-900). */
const scramCredentials = (secured?: Secured): string[] =>
  Object.entries(secured?.users ?? {}).flatMap(([name, password]) =>
    SCRAM_MECHANISMS.flatMap((mechanism) => [
      '--add-scram',
      `${mechanism}=[name=${name},password=${password}]`,
    ]),
  );

// KRaft wants a cluster id of 16 bytes in URL-safe base64 without padding. One that starts
// with "-" would be read as an option by the storage tool (Kafka's own generator skips those too).
function clusterId(): string {
  for (;;) {
    const id = Buffer.from(randomUUID().replaceAll('-', ''), 'hex').toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

// Ready means the controller has elected itself and the broker answers metadata
// requests, not merely that the port is open.
async function answersMetadata(bootstrap: string, secured?: Secured): Promise<boolean> {
  const admin = new Kafka({
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
    ...(secured ? { sasl: { mechanism: 'plain', ...secured.admin } } : {}),
  }).admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    if (cluster.brokers.length === 0 || cluster.controller === null) return false;
    // Asking for a group makes the broker create __consumer_offsets and load its coordinator,
    // which otherwise happens under the first test's consumer ("coordinator is loading").
    await admin.describeGroups(['partner-enrich-readiness']);
    return true;
  } finally {
    await admin.disconnect();
  }
}

/** A broker the caller can kill and start again on the same data dir and port (chaos tests). */
export interface RestartableBroker extends LocalBroker {
  readonly pid: number;
  /** SIGKILL of the JVM: no clean shutdown, the data dir stays as the crash left it. */
  kill(): Promise<void>;
  /** Starts the broker again on the same data dir, port and cluster id; resolves once it answers. */
  restart(): Promise<void>;
  /** SIGTERM, then SIGKILL after the grace period. */
  stop(): Promise<void>;
}

export async function startKafkaBroker(runDir: RunDir, version: string): Promise<LocalBroker> {
  const { version: started, bootstrap } = await startRestartableKafkaBroker(runDir, version);
  return { version: started, bootstrap };
}

export async function startRestartableKafkaBroker(
  runDir: RunDir,
  version: string,
  secured?: Secured,
): Promise<RestartableBroker> {
  const [broker] = await startNodes(runDir, version, 1, secured);
  return broker as RestartableBroker;
}

/** Brokers of one cluster: the bootstrap list names them all; each can be killed and restarted. */
export interface LocalCluster extends LocalBroker {
  readonly nodes: RestartableBroker[];
}

/**
 * A cluster of `size` nodes (each broker and controller, one KRaft quorum) as production runs
 * Kafka: internal topics and new topics replicated to every node (at most 3), writes acknowledged
 * by 2 in-sync replicas, so that one node killed leaves every partition writable.
 */
export async function startKafkaCluster(
  runDir: RunDir,
  version: string,
  size: number,
): Promise<LocalCluster> {
  const nodes = await startNodes(runDir, version, size);
  return { version, bootstrap: nodes.map((node) => node.bootstrap).join(','), nodes };
}

async function startNodes(
  runDir: RunDir,
  version: string,
  size: number,
  secured?: Secured,
): Promise<RestartableBroker[]> {
  const libs = await fetchKafka(version);
  const classpath = `${libs}/*`;
  const ports: { port: number; controllerPort: number }[] = [];
  for (let i = 0; i < size; i += 1) ports.push({ port: await freePort(), controllerPort: await freePort() });
  const voters = ports.map(({ controllerPort }, i) => `${i + 1}@127.0.0.1:${controllerPort}`).join(',');
  const replicas = Math.min(size, 3);
  const minIsr = Math.min(size, 2);
  const id = clusterId();
  const configs = await Promise.all(
    ports.map(async ({ port, controllerPort }, i) => {
      const name = size === 1 ? `kafka-${version}` : `kafka-${version}-node${i + 1}`;
      const config = join(runDir.path, `${name}.properties`);
      await writeFile(
        config,
        [
          'process.roles=broker,controller',
          `node.id=${i + 1}`,
          `controller.quorum.voters=${voters}`,
          ...listenerSettings(port, controllerPort, secured),
          'controller.listener.names=CONTROLLER',
          `log.dirs=${join(runDir.path, name)}`,
          'num.partitions=1',
          `default.replication.factor=${replicas}`,
          `min.insync.replicas=${minIsr}`,
          // Topics are created explicitly by the code that needs them, as in production.
          'auto.create.topics.enable=false',
          `offsets.topic.replication.factor=${replicas}`,
          'offsets.topic.num.partitions=8',
          `transaction.state.log.replication.factor=${replicas}`,
          `transaction.state.log.min.isr=${minIsr}`,
          'transaction.state.log.num.partitions=4',
          'group.initial.rebalance.delay.ms=0',
          'log.retention.check.interval.ms=600000',
          '',
        ].join('\n'),
      );
      await run('java', [
        '-cp',
        classpath,
        'kafka.tools.StorageTool',
        'format',
        '-t',
        id,
        '-c',
        config,
        ...scramCredentials(secured),
      ]);
      return { name, config, bootstrap: `127.0.0.1:${port}` };
    }),
  );
  const nodes = configs.map((node) => restartableNode(runDir, version, classpath, node, secured));
  // Each node is started before any is waited for: a node answers once the quorum has a
  // leader, which needs a majority of them up.
  for (const node of nodes) await node.launch();
  await Promise.all(nodes.map((node) => node.ready()));
  return nodes;
}

const JVM = ['-Xms128m', '-Xmx768m', '-XX:+UseSerialGC', '-Djava.awt.headless=true'];

function restartableNode(
  runDir: RunDir,
  version: string,
  classpath: string,
  { name, config, bootstrap }: { name: string; config: string; bootstrap: string },
  secured?: Secured,
): RestartableBroker & { launch(): Promise<void>; ready(): Promise<void> } {
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  const running = () => {
    if (!service) throw new Error(`${name} was never started`);
    return service;
  };
  const node = {
    version,
    bootstrap,
    get pid() {
      return running().pid;
    },
    async launch() {
      service = await startService(runDir, name, 'java', [...JVM, '-cp', classpath, 'kafka.Kafka', config]);
    },
    ready: () =>
      waitUntil(`Kafka ${version} (${name})`, () => answersMetadata(bootstrap, secured), {
        timeoutMs: 90_000,
        ...running(),
      }),
    async kill() {
      // The JVM leads its own process group (startService); no SIGTERM first, so no shutdown hook runs.
      process.kill(-running().pid, 'SIGKILL');
      while (!running().exited()) await sleep(50);
    },
    async restart() {
      if (!running().exited()) throw new Error(`Kafka ${version} is still running (pid ${running().pid})`);
      await node.launch();
      await node.ready();
    },
    stop: () => stopProcess(running().pid),
  };
  return node;
}
