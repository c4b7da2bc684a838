// The commands on a cluster run with least privilege: SASL and ACLs enforced (a broker of its
// own, StandardAuthorizer, nothing allowed without an ACL), the application's principal given
// the ACLs docs/OPERATIONS.md#kafka-acls lists and, per test, one of them less. A refusal must
// end the command at once with a code naming what to grant, and never show the password.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultInfrastructureOptions } from '../../deploy/local/infra.ts';
import { startRestartableKafkaBroker, type Secured } from '../../deploy/local/kafka-broker.ts';
import { createRunDir, stopProcess, type RunDir } from '../../deploy/local/processes.ts';
import type { Config } from '../../src/config/index.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { cliEnv, runCli } from '../support/cli.ts';
import { testTopics } from '../support/enrichment.ts';
import { uniqueName } from '../support/kafka.ts';

const APP_PASSWORD = 'app-Pa55word-never-shown';
const secured: Secured = {
  admin: { username: 'admin', password: 'admin-secret' },
  users: { app: APP_PASSWORD },
};

let runDir: RunDir;
let bootstrap: string;
let admin: Kafka;
let sandbox: RunningSandbox;

beforeAll(async () => {
  runDir = await createRunDir(mkdtempSync(join(tmpdir(), 'kafka-acls-')));
  const broker = await startRestartableKafkaBroker(
    runDir,
    defaultInfrastructureOptions().kafkaVersions[0] as string,
    secured,
  );
  bootstrap = broker.bootstrap;
  admin = new Kafka({
    brokers: [bootstrap],
    sasl: { mechanism: 'plain', ...secured.admin },
    logLevel: logLevel.NOTHING,
  });
  sandbox = await startSandbox({ port: 0, orgs: 50 });
});

afterAll(async () => {
  await sandbox?.close();
  await Promise.all((runDir?.pids ?? []).map((pid) => stopProcess(pid, 5_000)));
  if (runDir) rmSync(runDir.path, { recursive: true, force: true });
});

/** The operator's environment for the secured broker, as `user` (the application by default). */
function appEnv(
  topics: Config['topics'],
  groupId: string,
  user = { username: 'app', password: APP_PASSWORD },
): NodeJS.ProcessEnv {
  return {
    ...cliEnv(sandbox.url, topics, groupId),
    PARTNER_ENRICH_KAFKA__BROKERS: bootstrap,
    PARTNER_ENRICH_KAFKA__SASL__MECHANISM: 'plain',
    PARTNER_ENRICH_KAFKA__SASL__USERNAME: user.username,
    PARTNER_ENRICH_KAFKA__SASL__PASSWORD: user.password,
    PARTNER_ENRICH_INPUT_FORMAT: 'json',
  };
}

describe('on a cluster with SASL and ACLs', () => {
  it('regression: every command failed on a SASL cluster (KAFKA_UNAVAILABLE "Cannot add property authenticationProvider, object is not extensible": kafkajs writes into the frozen configuration); now `topics create` creates the topics', async () => {
    const topics = testTopics('acl-sasl');
    const result = await runCli(['topics', 'create'], appEnv(topics, uniqueName('g'), secured.admin));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const client = admin.admin();
    await client.connect();
    const listed = await client.listTopics();
    await client.disconnect();
    expect(listed).toEqual(expect.arrayContaining([topics.input, topics.state]));
  });
});
