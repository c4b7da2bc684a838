// The commands on a cluster run with least privilege: SASL and ACLs enforced (a broker of its
// own, StandardAuthorizer, nothing allowed without an ACL), the application's principal given
// the ACLs docs/OPERATIONS.md#kafka-acls lists and, per test, one of them less. A refusal must
// end the command at once with a code naming what to grant, and never show the password.
import { once } from 'node:events';
import kafkajs, { type AclEntry } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Secured } from '../../deploy/local/kafka-broker.ts';
import type { Config } from '../../src/config/index.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { cliEnv, runCli, startCli } from '../support/cli.ts';
import { createTopicsFor, pipelineTopicNames, readAll, testTopics } from '../support/enrichment.ts';
import { eventually, uniqueName } from '../support/kafka.ts';
import { securedBroker } from '../support/secured-broker.ts';

const { AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } = kafkajs;

const APP_PASSWORD = 'app-Pa55word-never-shown';
const secured: Secured = {
  admin: { username: 'admin', password: 'admin-secret' },
  users: { app: APP_PASSWORD },
};

const broker = securedBroker('kafka-acls', secured);
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, orgs: 50 });
});

afterAll(async () => {
  await sandbox?.close();
});

type Grant = Pick<AclEntry, 'resourceType' | 'resourceName' | 'operation'> & { prefixed?: boolean };

const topic = (name: string, operation: number): Grant => ({
  resourceType: AclResourceTypes.TOPIC,
  resourceName: name,
  operation,
});
const { READ, WRITE, DESCRIBE_CONFIGS } = AclOperationTypes;

/** What `run` (at-least-once) needs, as docs/OPERATIONS.md lists it. */
function runGrants(topics: Config['topics'], groupId: string): Grant[] {
  return [
    topic(topics.input, READ),
    ...[topics.matches, topics.events, topics.deadLetters].flatMap((t) => [
      topic(t, WRITE),
      topic(t, DESCRIBE_CONFIGS),
    ]),
    topic(topics.storage, READ),
    topic(topics.storage, WRITE),
    topic(topics.storage, DESCRIBE_CONFIGS),
    topic(topics.state, READ),
    topic(topics.state, WRITE),
    { resourceType: AclResourceTypes.GROUP, resourceName: groupId, operation: READ },
    {
      resourceType: AclResourceTypes.GROUP,
      resourceName: 'partner-enrich-',
      operation: READ,
      prefixed: true,
    },
  ];
}

/** What `dlq replay` needs, as docs/OPERATIONS.md lists it. */
const replayGrants = (topics: Config['topics']): Grant[] => [
  topic(topics.deadLetters, READ),
  topic(topics.input, READ),
  topic(topics.input, WRITE),
  topic(topics.input, DESCRIBE_CONFIGS),
  { resourceType: AclResourceTypes.GROUP, resourceName: 'partner-enrich-', operation: READ, prefixed: true },
];

/** `grants` but `operation` on `name`. */
const without = (grants: Grant[], name: string, operation: number): Grant[] =>
  grants.filter((g) => !(g.resourceName === name && g.operation === operation));

/** Replaces the application principal's ACLs by `grants`. */
async function grant(grants: Grant[]): Promise<void> {
  const client = broker.admin.admin();
  await client.connect();
  try {
    const principal = { principal: 'User:app', host: '*', permissionType: AclPermissionTypes.ANY };
    await client.deleteAcls({
      filters: [
        {
          ...principal,
          resourceType: AclResourceTypes.ANY,
          resourcePatternType: ResourcePatternTypes.ANY,
          operation: AclOperationTypes.ANY,
        },
      ],
    });
    if (grants.length > 0)
      await client.createAcls({
        acl: grants.map(({ prefixed, ...g }) => ({
          ...g,
          resourcePatternType: prefixed ? ResourcePatternTypes.PREFIXED : ResourcePatternTypes.LITERAL,
          principal: 'User:app',
          host: '*',
          permissionType: AclPermissionTypes.ALLOW,
        })),
      });
  } finally {
    await client.disconnect();
  }
}

/** Fresh topics (made by the admin), `records` written to some of them. */
async function freshTopics(records: Partial<Record<keyof Config['topics'], number>> = {}) {
  const topics = { ...testTopics('acl'), partitions: 2 };
  await createTopicsFor(broker.admin, topics);
  const producer = broker.admin.producer();
  await producer.connect();
  for (const [role, count] of Object.entries(records))
    await producer.send({
      topic: topics[role as keyof Config['topics']] as string,
      messages: Array.from({ length: count }, (_, i) => ({ key: `k${i}`, value: '{}' })),
    });
  await producer.disconnect();
  return topics;
}

/** One valid PartnerRecord (JSON) on `input`, written by the admin. */
async function sendPartner(input: string): Promise<void> {
  const producer = broker.admin.producer();
  await producer.connect();
  await producer.send({
    topic: input,
    messages: [
      {
        key: 'P-1',
        value: JSON.stringify({
          partnerId: 'P-1',
          sourceSystem: 'ERP-EU',
          names: ['Kaiser Software München'],
          addresses: [{ town: 'München', country: 'DE' }],
          changedAt: 1767225600000,
        }),
      },
    ],
  });
  await producer.disconnect();
}

/** The operator's environment for the secured broker, as `user` (the application by default). */
function appEnv(
  topics: Config['topics'],
  groupId: string,
  user = { username: 'app', password: APP_PASSWORD },
): NodeJS.ProcessEnv {
  return {
    ...cliEnv(sandbox.url, topics, groupId),
    PARTNER_ENRICH_KAFKA__BROKERS: broker.bootstrap,
    PARTNER_ENRICH_KAFKA__SASL__MECHANISM: 'plain',
    PARTNER_ENRICH_KAFKA__SASL__USERNAME: user.username,
    PARTNER_ENRICH_KAFKA__SASL__PASSWORD: user.password,
    PARTNER_ENRICH_INPUT_FORMAT: 'json',
  };
}

/** How long a refusal may take to end a command: it used to hang instead. */
const PROMPTLY_MS = 20_000;

/**
 * The command's end within PROMPTLY_MS (killed after: code null), with the lines it ended with;
 * the password never shown.
 */
async function ending(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; line: string; output: string }> {
  const child = startCli(args, env);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), PROMPTLY_MS);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  expect(output).not.toContain(APP_PASSWORD);
  const lines = output.split('\n').filter((line) => line.startsWith('partner-enrich: '));
  return { code, line: lines.join('\n') || output.slice(-2_000), output };
}

const withoutGroupPrefix = (grants: Grant[]): Grant[] => grants.filter((g) => !g.prefixed);

/** The command ends with exit 2, KAFKA_NOT_AUTHORIZED naming the throw-away groups' prefix. */
async function expectGroupPrefixRefused(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  await expectRefused(
    args,
    env,
    'KAFKA_NOT_AUTHORIZED: the broker named no coordinator for Group prefix partner-enrich-, ',
  );
}

/** `run`, given what it needs but `operation` on `name`, ends with exit 2, its line containing `text`. */
async function expectRunRefusedWithout(
  topics: Config['topics'],
  [name, operation]: [string, number],
  text: string,
): Promise<void> {
  const groupId = uniqueName('g');
  await grant(without(runGrants(topics, groupId), name, operation));
  await expectRefused(['run'], appEnv(topics, groupId), text);
}

/** The command ends with exit 2, its line containing `text`. */
async function expectRefused(args: string[], env: NodeJS.ProcessEnv, text: string): Promise<void> {
  const { code, line } = await ending(args, env);
  expect(line).toContain(text);
  expect(code).toBe(2);
}

describe('on a cluster with SASL and ACLs', () => {
  it('regression: every command failed on a SASL cluster (KAFKA_UNAVAILABLE "Cannot add property authenticationProvider, object is not extensible": kafkajs writes into the frozen configuration); now `topics create` creates the topics', async () => {
    const topics = testTopics('acl-sasl');
    const result = await runCli(['topics', 'create'], appEnv(topics, uniqueName('g'), secured.admin));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const client = broker.admin.admin();
    await client.connect();
    const listed = await client.listTopics();
    await client.disconnect();
    expect(listed).toEqual(expect.arrayContaining([topics.input, topics.state]));
  });

  it('regression: a wrong SASL password was reported as an outage (KAFKA_UNAVAILABLE "no broker of … answered"), which a supervisor waits out; now KAFKA_AUTHENTICATION_FAILED naming the mechanism and the user, exit 2', async () => {
    const topics = testTopics('acl-password');
    const env = appEnv(topics, uniqueName('g'), { username: 'app', password: 'not-the-Pa55word' });
    for (const args of [['run'], ['topics', 'create'], ['dlq', 'replay', '--dry-run'], ['rerun', 'list']]) {
      const { code, line, output } = await ending(args, env);
      expect(line, args.join(' ')).toMatch(
        /^partner-enrich: KAFKA_AUTHENTICATION_FAILED: the broker refused the SASL PLAIN credentials of user app \(/,
      );
      expect(output).not.toContain('not-the-Pa55word');
      expect(code).toBe(2);
    }
  });

  it('`kafka.sasl.mechanism` scram-sha-256 and scram-sha-512 log in as the principal (`dlq replay` reads its dead letters with the ACLs OPERATIONS lists), and a wrong SCRAM password is KAFKA_AUTHENTICATION_FAILED naming the mechanism, exit 2', async () => {
    const topics = await freshTopics({ deadLetters: 1 });
    await grant(replayGrants(topics));
    for (const mechanism of ['scram-sha-256', 'scram-sha-512']) {
      const env = { ...appEnv(topics, uniqueName('g')), PARTNER_ENRICH_KAFKA__SASL__MECHANISM: mechanism };
      const replay = await ending(['dlq', 'replay', '--dry-run'], env);
      expect(replay.output, mechanism).toContain('1 of 1 dead letters match');
      expect(replay.code, mechanism).toBe(0);
      const refused = await ending(['dlq', 'replay', '--dry-run'], {
        ...env,
        PARTNER_ENRICH_KAFKA__SASL__PASSWORD: 'not-the-Pa55word',
      });
      expect(refused.line).toMatch(
        new RegExp(
          `^partner-enrich: KAFKA_AUTHENTICATION_FAILED: the broker refused the SASL ${mechanism.toUpperCase()} credentials of user app \\(`,
        ),
      );
      expect(refused.output).not.toContain('not-the-Pa55word');
      expect(refused.code).toBe(2);
    }
  });

  it('regression: `dlq replay` without Read on the partner-enrich- groups ended with exit 13 and no message (a consumer stopped for good was never noticed: "unsettled top-level await"); now exit 2, KAFKA_NOT_AUTHORIZED naming the group prefix', async () => {
    const topics = await freshTopics({ deadLetters: 1 });
    await grant(withoutGroupPrefix(replayGrants(topics)));
    await expectGroupPrefixRefused(['dlq', 'replay', '--dry-run'], appEnv(topics, uniqueName('g')));
  });

  it('regression: the throw-away groups were named partner-enrich-… in every deployment, so a principal granted Read on groups of its own prefix only could start neither `run` nor `dlq replay` (KAFKA_NOT_AUTHORIZED on Group prefix partner-enrich-); now they take kafka.readerGroupPrefix', async () => {
    const topics = await freshTopics({ deadLetters: 1 });
    await sendPartner(topics.input);
    const groupId = uniqueName('g');
    const prefix = `${groupId}.readers.`;
    const ownPrefix = (grants: Grant[]) =>
      grants.map((g) => (g.prefixed ? { ...g, resourceName: prefix } : g));
    await grant([...ownPrefix(runGrants(topics, groupId)), ...ownPrefix(replayGrants(topics))]);
    await expectGroupPrefixRefused(['dlq', 'replay', '--dry-run'], appEnv(topics, groupId));

    const env = { ...appEnv(topics, groupId), PARTNER_ENRICH_KAFKA__READER_GROUP_PREFIX: prefix };
    const replay = await ending(['dlq', 'replay', '--dry-run'], env);
    expect(replay.code, replay.output).toBe(0);
    const run = startCli(['run'], env);
    const exited = once(run, 'exit') as Promise<[number | null]>;
    try {
      await eventually(
        async () => (await readAll(broker.admin, topics.matches)).length === 1,
        PROMPTLY_MS,
        'the MatchResult of the record',
      );
    } finally {
      run.kill('SIGTERM');
    }
    const [code] = await exited;
    expect(code).toBe(0);
  });

  it('regression: `run` without Read on a state topic holding entries hung at start (/readyz 503 for good); now exit 2 at once, KAFKA_NOT_AUTHORIZED naming the topic and Read', async () => {
    const topics = await freshTopics({ state: 2 });
    await expectRunRefusedWithout(
      topics,
      [topics.state, READ],
      `KAFKA_NOT_AUTHORIZED: the broker refused Read on Topic ${topics.state} `,
    );
  });

  it('regression: `run` without Read on the partner-enrich- groups and an empty state topic ran on ready, its ledger and rerun followers stopped for good (blind to what other replicas pay for); now exit 2 at start', async () => {
    const topics = await freshTopics();
    const groupId = uniqueName('g');
    await grant(withoutGroupPrefix(runGrants(topics, groupId)));
    await expectGroupPrefixRefused(['run'], appEnv(topics, groupId));
  });

  it('regression: `run` and `dlq replay` without DescribeConfigs on a topic they write (max.message.bytes) ended as an unexpected failure, exit 1 with a stack; now exit 2, KAFKA_NOT_AUTHORIZED naming DescribeConfigs and that topic', async () => {
    const topics = await freshTopics({ deadLetters: 1 });
    const groupId = uniqueName('g');
    await grant(without(runGrants(topics, groupId), topics.events, DESCRIBE_CONFIGS));
    const run = await ending(['run'], appEnv(topics, groupId));
    expect(run.line).toBe(
      `partner-enrich: KAFKA_NOT_AUTHORIZED: the broker refused DescribeConfigs on Topic ${topics.events} ` +
        `(TOPIC_AUTHORIZATION_FAILED): grant the principal DescribeConfigs on Topic ${topics.events} ` +
        '(docs/OPERATIONS.md, Kafka ACLs)',
    );
    expect(run.code).toBe(2);
    await grant(without(replayGrants(topics), topics.input, DESCRIBE_CONFIGS));
    await expectRefused(
      ['dlq', 'replay', '--dry-run'],
      appEnv(topics, groupId),
      `KAFKA_NOT_AUTHORIZED: the broker refused DescribeConfigs on Topic ${topics.input} `,
    );
  });

  it('regression: a topic the principal may not describe was reported missing (`run`: TOPIC_MISSING, "`partner-enrich topics create` creates the pipeline\'s topics"; `rerun start`: RERUN_UNKNOWN_TOPIC), and `topics create` with Create but no Describe made the topics, then waited a minute for leaders it could not see; now both exit 2, KAFKA_NOT_AUTHORIZED naming Describe on the topic', async () => {
    const topics = await freshTopics();
    const groupId = uniqueName('g');
    await expectRunRefusedWithout(
      topics,
      [topics.input, READ],
      `KAFKA_NOT_AUTHORIZED: the broker refused Describe on Topic ${topics.input} `,
    );
    await grant([
      topic(topics.state, READ),
      topic(topics.state, WRITE),
      {
        resourceType: AclResourceTypes.TRANSACTIONAL_ID,
        resourceName: `${topics.state}.rerun-start.${topics.input}`,
        operation: WRITE,
      },
    ]);
    await expectRefused(
      ['rerun', 'start'],
      appEnv(topics, groupId),
      `KAFKA_NOT_AUTHORIZED: the broker refused Describe on Topic ${topics.input} `,
    );
    const fresh = testTopics('acl-create');
    await grant([
      {
        resourceType: AclResourceTypes.CLUSTER,
        resourceName: 'kafka-cluster',
        operation: AclOperationTypes.CREATE,
      },
    ]);
    await expectRefused(
      ['topics', 'create'],
      appEnv(fresh, groupId),
      `KAFKA_NOT_AUTHORIZED: the broker refused Describe on Topic ${fresh.input} `,
    );
  });

  it('regression: a refused consumer group or transactional id was reported as "Failed to find group coordinator" (run: PIPELINE_SOURCE_FAILED; exactly-once: TRANSACTION_FAILED; rerun start: STATE_WRITE_FAILED); now each names Read on the group or Write on the transactional id', async () => {
    const topics = await freshTopics();
    const groupId = uniqueName('g');
    const grants = runGrants(topics, groupId);
    await grant(without(grants, groupId, READ));
    const run = await ending(['run'], appEnv(topics, groupId));
    expect(run.output).toContain(
      `the broker named no coordinator for Group ${groupId}, as it answers when Read`,
    );
    expect(run.code).toBe(1);
    await grant(grants);
    const exactlyOnce = await ending(['run', '--delivery', 'exactly-once'], appEnv(topics, groupId));
    expect(exactlyOnce.output).toMatch(
      new RegExp(
        `no coordinator for TransactionalId ${groupId}\\.${topics.input.replaceAll('.', '\\.')}\\.[01],`,
      ),
    );
    expect(exactlyOnce.code).toBe(1);
    await grant([topic(topics.state, READ), topic(topics.state, WRITE), topic(topics.input, READ)]);
    await expectRefused(
      ['rerun', 'start'],
      appEnv(topics, groupId),
      `STATE_WRITE_FAILED: state topic ${topics.state}: the broker named no coordinator for TransactionalId ` +
        `${topics.state}.rerun-start.${topics.input}`,
    );
  });

  it('regression: `run` without Write on its storage topic failed at the first record with "Not authorized to access topics" and no topic named; now PIPELINE_OUTPUT_FAILED names Write and the topics of the refused request, exit 1 (fatal while running)', async () => {
    const topics = await freshTopics();
    await sendPartner(topics.input);
    const groupId = uniqueName('g');
    await grant(without(runGrants(topics, groupId), topics.storage, WRITE));
    const run = await ending(['run'], appEnv(topics, groupId));
    // A failure while running is the log's fatal line (its err with code and message), exit 1.
    const fatal = run.output.split('\n').find((line) => line.includes('fatal failure: stopping'));
    expect(JSON.parse(fatal ?? '{}')).toMatchObject({
      err: {
        code: 'PIPELINE_OUTPUT_FAILED',
        message: expect.stringMatching(
          new RegExp(
            `^outputs could not be written: the broker refused Write on Topic [^(]*${topics.storage.replaceAll('.', '\\.')}`,
          ),
        ),
      },
    });
    expect(run.code).toBe(1);
  });

  it('regression: `topics create` without DescribeConfigs on the existing storage and state topics (their cleanup.policy) ended as an unexpected failure, exit 1 with a stack; now exit 2, KAFKA_NOT_AUTHORIZED naming DescribeConfigs on them', async () => {
    const topics = await freshTopics();
    await grant(pipelineTopicNames(topics).map((name) => topic(name, AclOperationTypes.DESCRIBE)));
    await expectRefused(
      ['topics', 'create'],
      appEnv(topics, uniqueName('g')),
      `KAFKA_NOT_AUTHORIZED: the broker refused DescribeConfigs on Topic ${topics.storage}, ${topics.state} `,
    );
  });
});
