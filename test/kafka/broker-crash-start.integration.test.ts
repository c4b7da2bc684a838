// `run` started moments after a broker of a three-node cluster crashed, as a supervisor restarts
// a replica during a broker's outage: the crashed broker stays in the metadata until the cluster
// fences it (broker.session.timeout.ms, 9 s), and may be named as the controller and as leader.
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { cliEnv, startCli } from '../support/cli.ts';
import {
  committedAtEnd,
  createTopicsFor,
  jsonPartnerMessages,
  produce,
  testTopics,
} from '../support/enrichment.ts';
import { eventually, uniqueName } from '../support/kafka.ts';
import { threeNodeCluster } from '../support/own-brokers.ts';
import { deleteSubject } from '../support/schema-registry.ts';

const SEED = 29;

const own = threeNodeCluster('broker-crash');
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, orgs: 1_000, seed: SEED });
});

afterAll(async () => sandbox?.close());

type Delivery = 'at-least-once' | 'exactly-once';

/**
 * `run` started on the cluster with node `down` (index) crashed: it must enrich the ten records
 * written meanwhile, commit them, and stop with exit 0 on SIGTERM.
 */
async function runWhileDown(
  delivery: Delivery,
  topics: ReturnType<typeof testTopics>,
  down: number,
): Promise<void> {
  const partners = jsonPartnerMessages(30, SEED);
  const groupId = uniqueName('g');
  const child = startCli(['run'], {
    ...cliEnv(sandbox.url, topics, groupId),
    PARTNER_ENRICH_KAFKA__BROKERS: own.cluster.bootstrap,
    PARTNER_ENRICH_TOPICS__PARTITIONS: '3',
    PARTNER_ENRICH_TOPICS__REPLICATION_FACTOR: '3',
    PARTNER_ENRICH_INPUT_FORMAT: 'json',
    PARTNER_ENRICH_DELIVERY: delivery,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk));
  const exited = once(child, 'exit') as Promise<[number | null]>;
  const context = `${delivery}, node ${down + 1} down`;
  try {
    // The test's own kafkajs clients meet the crashed broker too: asked again until it is fenced.
    await eventually(
      () =>
        produce(own.kafka, topics.input, partners.slice(down * 10, down * 10 + 10)).then(
          () => true,
          () => false,
        ),
      30_000,
      `${context}: the records written`,
    );
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`run exited ${child.exitCode}: ${output.slice(-2_000)}`);
        return committedAtEnd(own.kafka, groupId, topics.input).catch(() => false);
      },
      60_000,
      `${context}: the committed positions at the end offsets`,
    );
  } finally {
    child.kill('SIGTERM');
  }
  const [code] = await exited;
  expect(code, `${context}: ${output.slice(-2_000)}`).toBe(0);
}

describe('`run` started while a broker of three has just crashed', () => {
  it('regression: the start failed within seconds, an unexpected failure with a stack (exit 1: KafkaJSConnectionError ECONNREFUSED from kafkajs requests to "the controller" and the probe), whichever broker had crashed; now it starts and enriches with each of the three down, at-least-once and exactly-once side by side', async () => {
    const runs = (['at-least-once', 'exactly-once'] as const).map((delivery) => ({
      delivery,
      topics: { ...testTopics(`crash-${delivery}`), partitions: 3, replicationFactor: 3 },
    }));
    for (const { topics } of runs) await createTopicsFor(own.kafka, topics);
    try {
      for (const [down, node] of own.cluster.nodes.entries()) {
        await node.kill();
        await Promise.all(runs.map(({ delivery, topics }) => runWhileDown(delivery, topics, down)));
        await node.restart();
      }
    } finally {
      for (const { topics } of runs)
        for (const t of [topics.matches, topics.events, topics.storage]) await deleteSubject(`${t}-value`);
    }
  }, 300_000);
});
