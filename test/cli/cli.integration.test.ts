// The `partner-enrich` command as an operator runs it: a separate process configured by
// environment variables, against the test broker and registry and a sandbox.
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/index.ts';
import { generateDataset } from '../../src/sandbox/dataset/dataset.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { upstreamPartners } from '../../src/sandbox/upstream-partners.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { cliEnv, runCli, startCli } from '../support/cli.ts';
import {
  committedAndEndOffsets,
  dropTopics,
  partnerEncoder,
  pipelineTopicNames,
  produce,
  readAll,
  testTopics,
} from '../support/enrichment.ts';
import { eventually, kafkaClient, uniqueName, withTopics } from '../support/kafka.ts';
import { deleteSubject, schemaRegistry } from '../support/schema-registry.ts';

describe('partner-enrich CLI against Kafka', () => {
  const kafka = kafkaClient();
  const topics = testTopics('cli');
  const groupId = uniqueName('cli-group');
  let sandbox: RunningSandbox;
  let env: NodeJS.ProcessEnv;
  let partners: PartnerRecord[];

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, orgs: 2_000, seed: 3 });
    env = cliEnv(sandbox.url, topics, groupId);
    partners = upstreamPartners(generateDataset({ organizations: 2_000, seed: 3 }), {
      count: 300,
      seed: 3,
      invalid: 0,
      resent: 0,
      updated: 0,
    }).map((r) => r.partner as PartnerRecord);
  });
  afterAll(async () => {
    await dropTopics(kafka, topics);
    for (const t of [topics.input, topics.matches, topics.events, topics.storage])
      await deleteSubject(`${t}-value`);
    await sandbox?.close();
  });

  it('`topics create` creates the six topics, and a second call finds them all', async () => {
    const first = await runCli(['topics', 'create'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(topics.storage);
    const second = await runCli(['topics', 'create'], env);
    expect(second.stdout).toContain('all topics exist');
  });

  it('a command that talks to Kafka prints no TimeoutNegativeWarning (kafkajs gave its idle request queue a negative timer)', async () => {
    const result = await runCli(['topics', 'create'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('TimeoutNegativeWarning');
  });

  it('`run` serves health and metrics, enriches what arrives, and exits cleanly on SIGTERM with offsets committed', async () => {
    const encode = await partnerEncoder(schemaRegistry(), topics.input);
    const invalid = {
      ...(partners[0] as PartnerRecord),
      partnerId: 'BAD-COUNTRY',
      addresses: [
        { street: null, houseNumber: null, postCode: null, town: null, region: null, country: 'XX' },
      ],
    };
    await produce(kafka, topics.input, [
      ...(await Promise.all(partners.map(async (p) => ({ key: p.partnerId, value: await encode(p) })))),
      { key: invalid.partnerId, value: await encode(invalid) },
    ]);

    const child = startCli(['run'], env);
    let logs = '';
    child.stdout?.on('data', (chunk: Buffer) => (logs += chunk));
    child.stderr?.on('data', (chunk: Buffer) => (logs += chunk));
    try {
      await eventually(
        () => /"metrics":"(http:[^"]+)\/metrics"/.test(logs),
        60_000,
        'the operations endpoint',
      );
      const base = (/"metrics":"(http:[^"]+)\/metrics"/.exec(logs) as RegExpExecArray)[1] as string;
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const deadline = Date.now() + 90_000;
      while ((await readAll(kafka, topics.matches)).length < partners.length) {
        if (Date.now() > deadline) throw new Error(`not every record was matched:\n${logs}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      const metrics = await (await fetch(`${base}/metrics`)).text();
      expect(metrics).toMatch(/partner_enrich_records_out_total\{outcome="MATCH"\} [1-9]/);
      // The gauge the not-ready alert reads says what /readyz said.
      expect(metrics).toMatch(/^partner_enrich_ready 1$/m);
      expect(metrics).toMatch(
        /partner_enrich_dead_letters_total\{reason="mapping\/MAPPING_INVALID_COUNTRY"\} 1/,
      );
      expect(metrics).not.toContain('sandbox-api-key');
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code, logs).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    expect(logs).not.toContain('sandbox-api-key');
    expect(logs).not.toContain('TimeoutNegativeWarning');
    const { committed, end } = await committedAndEndOffsets(kafka, groupId, topics.input);
    expect(committed).toEqual(end);
  });

  it('`dlq replay` counts with --dry-run, then re-publishes the chosen dead letters to the input topic', async () => {
    const dry = await runCli(['dlq', 'replay', '--code', 'MAPPING_INVALID_COUNTRY', '--dry-run'], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('1 of 1 dead letters match');
    expect(dry.stdout).toContain('mapping/MAPPING_INVALID_COUNTRY: 1');
    const before = (await readAll(kafka, topics.input)).length;

    const none = await runCli(['dlq', 'replay', '--code', 'TASK_FAILED'], env);
    expect(none.stdout).toContain('0 of 1 dead letters match');

    const replay = await runCli(['dlq', 'replay', '--partner', 'BAD-COUNTRY'], env);
    expect(replay.code, replay.stderr).toBe(0);
    const input = await readAll(kafka, topics.input);
    expect(input).toHaveLength(before + 1);
    const replayed = input.find((m) => m.headers?.['pe.replayed-from'] !== undefined);
    expect(replayed?.key?.toString()).toBe('BAD-COUNTRY');
    expect(replayed?.headers?.['pe.replayed-from']?.toString()).toMatch(
      new RegExp(`^${topics.deadLetters}:`),
    );
  });
});

// `topics create` on a broker where some of the pipeline's topics exist already, or that
// refuses one: what an operator meets when the topics were made by hand or by another tool.
describe('partner-enrich topics create beside existing topics', () => {
  const kafka = kafkaClient();
  const made: Config['topics'][] = [];
  const fresh = (): { topics: Config['topics']; env: NodeJS.ProcessEnv } => {
    const topics = testTopics('topics-create');
    made.push(topics);
    return { topics, env: cliEnv('http://127.0.0.1:1', topics, uniqueName('topics-create')) };
  };
  afterAll(async () => {
    for (const topics of made) await dropTopics(kafka, topics);
  });

  /** Partition count and cleanup.policy of each topic, as the broker has them. */
  const layout = async (names: string[]): Promise<Record<string, string>> => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: names });
      const { resources } = await admin.describeConfigs({
        includeSynonyms: false,
        resources: names.map((name) => ({ type: 2, name, configNames: ['cleanup.policy'] })),
      });
      const policy = (name: string) =>
        resources.find((r) => r.resourceName === name)?.configEntries[0]?.configValue;
      return Object.fromEntries(
        topics.map((t) => [t.name, `${t.partitions.length} ${policy(t.name) ?? '?'}`]),
      );
    } finally {
      await admin.disconnect();
    }
  };

  it('regression: topics create gave a missing storage topic topics.partitions instead of the existing input topic’s count (run then refused STATE_NOT_COPARTITIONED)', async () => {
    const { topics, env } = fresh();
    const { cleanup } = await withTopics(kafka, [{ topic: topics.input, numPartitions: 5 }]);
    try {
      const result = await runCli(['topics', 'create'], env); // topics.partitions is 2 in env
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(`created: ${topics.matches}`);
      expect(result.stdout).toContain(`${topics.storage}: 5 partitions, as input topic ${topics.input}`);
      expect(await layout([topics.input, topics.storage, topics.state, topics.matches])).toEqual({
        [topics.input]: '5 delete',
        [topics.storage]: '5 compact',
        [topics.state]: '2 compact',
        [topics.matches]: '2 delete',
      });
    } finally {
      await cleanup();
    }
  });

  it('regression: topics create exited 0 (creating the rest, or saying "all topics exist") for a storage topic not co-partitioned with the input, and storage and state topics that are not compacted', async () => {
    const { topics, env } = fresh();
    const { cleanup } = await withTopics(kafka, [
      { topic: topics.input, numPartitions: 2 },
      { topic: topics.storage, numPartitions: 3 },
      { topic: topics.state, numPartitions: 1, configEntries: [{ name: 'cleanup.policy', value: 'delete' }] },
    ]);
    try {
      const result = await runCli(['topics', 'create'], env);
      expect(result.code, result.stdout).toBe(2);
      expect(result.stderr).toMatch(/^partner-enrich: TOPIC_MISCONFIGURED: /m);
      expect(result.stderr).toContain(
        `storage topic ${topics.storage} has 3 partitions and input topic ${topics.input} has 2`,
      );
      expect(result.stderr).toContain(
        `storage topic ${topics.storage} is not compacted (cleanup.policy delete)`,
      );
      expect(result.stderr).toContain(`state topic ${topics.state} is not compacted (cleanup.policy delete)`);
      expect(result.stderr).toContain('nothing was created');
      expect(result.stderr).not.toContain('unexpected failure');
      // Nothing created: the operator fixes the topics first, then runs it again.
      const admin = kafka.admin();
      await admin.connect();
      const existing = await admin.listTopics();
      await admin.disconnect();
      expect(existing).not.toContain(topics.matches);
    } finally {
      await cleanup();
    }
  });

  it('regression: topics create ended as an unexpected failure with a stack (exit 1) when the broker refused a topic (replication factor above the broker count)', async () => {
    const { topics, env } = fresh();
    const result = await runCli(['topics', 'create'], {
      ...env,
      PARTNER_ENRICH_TOPICS__REPLICATION_FACTOR: '3',
    });
    expect(result.code, result.stderr).toBe(2);
    const all = pipelineTopicNames(topics);
    expect(result.stderr.split('\n')).toContain(
      `partner-enrich: TOPIC_CREATE_REFUSED: the broker refused to create ${all.join(', ')}: ` +
        'Replication-factor is invalid (INVALID_REPLICATION_FACTOR) ' +
        '(asked for topics.partitions 2, topics.replicationFactor 3); nothing was created',
    );
    expect(result.stderr).not.toContain('unexpected failure');
    expect(result.stderr).not.toContain('    at ');
  });

  it("regression: kafkajs's own JSON error line preceded TOPIC_CREATE_REFUSED (its detail is at debug level now)", async () => {
    const { topics, env } = fresh();
    const refused = { ...env, PARTNER_ENRICH_TOPICS__REPLICATION_FACTOR: '3' };
    const all = pipelineTopicNames(topics).join(', ');
    const line =
      `partner-enrich: TOPIC_CREATE_REFUSED: the broker refused to create ${all}: ` +
      'Replication-factor is invalid (INVALID_REPLICATION_FACTOR) ' +
      '(asked for topics.partitions 2, topics.replicationFactor 3); nothing was created\n';
    expect(await runCli(['topics', 'create'], refused)).toEqual({ code: 2, stdout: '', stderr: line });

    const debug = await runCli(['topics', 'create'], {
      ...refused,
      PARTNER_ENRICH_OBSERVABILITY__LOG_LEVEL: 'debug',
    });
    expect(debug.stderr).toBe(line);
    const kafkajsLines = debug.stdout
      .split('\n')
      .filter(Boolean)
      .map((text) => JSON.parse(text) as { level: number; name: string; msg: string; kafkajs?: object });
    expect(kafkajsLines.length).toBeGreaterThan(0);
    for (const entry of kafkajsLines) {
      expect(entry).toMatchObject({
        level: 20,
        name: 'partner-enrich',
        kafkajs: { namespace: 'Connection' },
      });
      expect(entry.msg).toMatch(/^Response CreateTopics/);
    }
  });
});
