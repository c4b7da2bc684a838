// Kafka SASL/OAUTHBEARER: `run` against a broker that takes OAuth bearer tokens (its own, with
// Kafka's unsecured validator) and an OAuth token endpoint issuing 30 s tokens for the client
// credentials grant. The broker ends a session when its token expires, so `run` must fetch new
// tokens in time and authenticate its connections again while it works.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Secured } from '../../deploy/local/kafka-broker.ts';
import type { Config } from '../../src/config/index.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { cliEnv } from '../support/cli.ts';
import { createTopicsFor, jsonPartnerMessages, produce, testTopics } from '../support/enrichment.ts';
import { uniqueName } from '../support/kafka.ts';
import { startOAuthIssuer, type OAuthIssuer } from '../support/oauth-issuer.ts';
import { committedRecords, startCollected, waitFor } from '../support/run-process.ts';
import { securedBroker } from '../support/secured-broker.ts';

const CLIENT_ID = 'partner-enrich-app';
const CLIENT_SECRET = 'oauth-Secr3t-never-shown';
const TOKEN_LIFETIME_S = 30;
const SEED = 17;

const secured: Secured = { admin: { username: 'admin', password: 'admin-secret' }, users: {} };

const broker = securedBroker('kafka-oauth', secured);
let sandbox: RunningSandbox;
let issuer: OAuthIssuer;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, orgs: 200, seed: SEED });
  // The broker's super user: what is tested is the authentication, not the ACLs.
  issuer = await startOAuthIssuer(
    { [CLIENT_ID]: { secret: CLIENT_SECRET, principal: 'admin' } },
    TOKEN_LIFETIME_S,
  );
});

afterAll(async () => {
  await issuer?.close();
  await sandbox?.close();
});

function oauthEnv(topics: Config['topics'], groupId: string, secret = CLIENT_SECRET): NodeJS.ProcessEnv {
  return {
    ...cliEnv(sandbox.url, topics, groupId),
    PARTNER_ENRICH_KAFKA__BROKERS: broker.bootstrap,
    PARTNER_ENRICH_KAFKA__SASL__MECHANISM: 'oauthbearer',
    PARTNER_ENRICH_KAFKA__SASL__TOKEN_URL: issuer.url,
    PARTNER_ENRICH_KAFKA__SASL__CLIENT_ID: CLIENT_ID,
    PARTNER_ENRICH_KAFKA__SASL__CLIENT_SECRET: secret,
    PARTNER_ENRICH_KAFKA__SASL__EXTENSIONS: 'logicalCluster=lkc-test',
    PARTNER_ENRICH_INPUT_FORMAT: 'json',
    PARTNER_ENRICH_OBSERVABILITY__LOG_LEVEL: 'info',
  };
}

describe('Kafka SASL/OAUTHBEARER', () => {
  it('`run` enriches over OAUTHBEARER for longer than a token lives: new tokens before the old expire, connections authenticated again, nothing refused; the secret and the tokens never shown', async () => {
    const topics = { ...testTopics('oauth'), partitions: 2 };
    await createTopicsFor(broker.admin, topics);
    const partners = jsonPartnerMessages(40, SEED, 200);
    await produce(broker.admin, topics.input, partners.slice(0, 20));
    const groupId = uniqueName('oauth-group');
    const firstToken = issuer.issued.length;
    const running = startCollected(['run'], oauthEnv(topics, groupId));
    // The endpoint away while the first token's sessions authenticate again (kafkajs: 10 s
    // before it expires, 20 s after it was issued): the next token was fetched ahead, half-way
    // through the first's life (src/refdata/token-provider.ts, refreshAhead), so nothing asks it
    // meanwhile. Before, the next token was asked by the first connection to authenticate after
    // that point, and one in the outage failed ("gave no token", commits failed) until it ended.
    const away = waitFor(
      async () => issuer.issuedAt.length > firstToken,
      30_000,
      () => `a token issued:\n${running.logs().slice(-3000)}`,
    ).then(async () => {
      const issuedAt = issuer.issuedAt[firstToken] as number;
      await sleep(issuedAt + 17_500 - Date.now());
      issuer.away = true;
      await sleep(issuedAt + 26_000 - Date.now());
      issuer.away = false;
    });
    const committed = (count: number) =>
      waitFor(
        async () => (await committedRecords(broker.admin, topics.input, groupId)) >= count,
        90_000,
        () => `${count} records committed:\n${running.logs().slice(-3000)}`,
      );
    try {
      await committed(20);
      // Past the first tokens' life: every connection of `run` has had to authenticate again.
      await sleep((TOKEN_LIFETIME_S + 10) * 1000);
      expect(running.child.exitCode).toBeNull();
      await produce(broker.admin, topics.input, partners.slice(20));
      await committed(40);
    } finally {
      running.child.kill('SIGTERM');
      await away.finally(() => (issuer.away = false));
    }
    expect(await running.exited).toBe(0);
    expect(issuer.issued.length).toBeGreaterThanOrEqual(2);
    const logs = running.logs();
    expect(logs).not.toContain('gave no token');
    expect(logs).not.toContain('commit failed');
    expect(logs).not.toContain('ILLEGAL_SASL_STATE');
    expect(logs).not.toMatch(/authentication failed/i);
    expect(logs).not.toMatch(/"level":50/);
    expect(logs).not.toContain(CLIENT_SECRET);
    for (const token of issuer.issued) expect(logs).not.toContain(token);
  }, 240_000);

  it('a client the token endpoint refuses ends `run` at once, exit 2, KAFKA_AUTHENTICATION_FAILED naming the endpoint, the client and its answer; the secret not shown', async () => {
    const topics = { ...testTopics('oauth-refused'), partitions: 2 };
    await createTopicsFor(broker.admin, topics);
    const wrong = 'wrong-Secr3t-never-shown';
    const running = startCollected(['run'], oauthEnv(topics, uniqueName('oauth-group'), wrong));
    const timer = setTimeout(() => running.child.kill('SIGKILL'), 30_000);
    const code = await running.exited;
    clearTimeout(timer);
    const logs = running.logs();
    expect(code).toBe(2);
    expect(logs).toContain(
      `partner-enrich: KAFKA_AUTHENTICATION_FAILED: the OAuth token endpoint ${issuer.url} refused client ${CLIENT_ID}: 401 invalid_client: client authentication failed: check kafka.sasl`,
    );
    expect(logs).not.toContain(wrong);
  }, 60_000);
});
