// Exactly-once as an operator runs it: `partner-enrich run --delivery exactly-once` (separate
// processes) killed with SIGKILL, joined by a second replica that is killed in turn, and
// paused past its session timeout (a zombie) while another member takes its partitions. A
// read_committed consumer of the outputs must see exactly one MatchResult per input record
// and one Created event per new partner, on the real broker, registry and sandbox.
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/index.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { cliEnv } from '../support/cli.ts';
import { kafkaClient } from '../support/kafka.ts';
import {
  committedRecords,
  distinctPartners,
  eachRecordOnce,
  killHard,
  outputsOnceDrained,
  startCollected,
  topicsWithPartners,
  waitFor,
  type RunningCli,
} from '../support/run-process.ts';
import { schemaRegistry } from '../support/schema-registry.ts';

const SEED = 13;
const PARTNERS = 20_000;

describe('delivery exactly-once: kills, a rebalance and a zombie', () => {
  const kafka: Kafka = kafkaClient();
  const registry = schemaRegistry();
  const children: RunningCli[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  let sandbox: RunningSandbox;
  let partners: PartnerRecord[];

  const start = (topics: Config['topics'], groupId: string, extra: NodeJS.ProcessEnv = {}): RunningCli => {
    const running = startCollected(['run', '--delivery', 'exactly-once'], {
      ...cliEnv(sandbox.url, topics, groupId),
      PARTNER_ENRICH_TOPICS__PARTITIONS: String(topics.partitions),
      PARTNER_ENRICH_KAFKA__SESSION_TIMEOUT_MS: '6000',
      PARTNER_ENRICH_EXACTLY_ONCE__COMMIT_INTERVAL_MS: '500',
      PARTNER_ENRICH_OBSERVABILITY__LOG_LEVEL: 'info',
      ...extra,
    });
    children.push(running);
    return running;
  };

  const kill = killHard;

  const committed = (topics: Config['topics'], groupId: string) =>
    committedRecords(kafka, topics.input, groupId);

  const setUp = async (prefix: string, count: number) => {
    const run = await topicsWithPartners(kafka, registry, prefix, partners.slice(0, count));
    cleanups.push(run.cleanup);
    return run;
  };

  /** Waits for every position to be committed, then reads the outputs as a read_committed consumer. */
  const finish = (topics: Config['topics'], groupId: string, count: number, logs: () => string) =>
    outputsOnceDrained(kafka, registry, { topics, groupId }, count, logs);

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, orgs: PARTNERS, seed: SEED });
    partners = distinctPartners(PARTNERS, SEED);
  }, 120_000);

  afterAll(async () => {
    for (const running of children) {
      if (running.child.exitCode === null && running.child.signalCode === null) {
        running.child.kill('SIGCONT');
        running.child.kill('SIGKILL');
      }
    }
    for (const cleanup of cleanups) await cleanup().catch(() => {});
    await sandbox?.close();
  });

  it('kill -9 three times during a 20,000-record run: every record once, every new partner Created once', async () => {
    const { topics, groupId } = await setUp('eos-kill', PARTNERS);
    let running = start(topics, groupId);
    for (const at of [3_000, 8_000, 13_000]) {
      await waitFor(
        async () => (await committed(topics, groupId)) >= at,
        120_000,
        () => `${at} positions committed:\n${running.logs().slice(-3000)}`,
      );
      await kill(running);
      running = start(topics, groupId);
    }
    const outcome = await finish(topics, groupId, PARTNERS, () => running.logs());
    expect(outcome).toEqual(eachRecordOnce(PARTNERS));
    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
  }, 240_000);

  it('a second replica joins, then is killed: every record once', async () => {
    const count = 6_000;
    const { topics, groupId } = await setUp('eos-rebalance', count);
    const slow = {
      PARTNER_ENRICH_BATCHING__MAX_TASKS: '100',
      PARTNER_ENRICH_BATCHING__MAX_CONCURRENT_BULKS: '1',
    };
    const first = start(topics, groupId, slow);
    await waitFor(
      async () => (await committed(topics, groupId)) >= 1_000,
      60_000,
      () => first.logs().slice(-3000),
    );
    const second = start(topics, groupId, slow);
    await waitFor(
      async () => /partitions assigned/.test(second.logs()) && (await committed(topics, groupId)) >= 2_500,
      60_000,
      () => second.logs().slice(-3000),
    );
    await kill(second);
    const outcome = await finish(topics, groupId, count, () => first.logs());
    expect(outcome).toEqual(eachRecordOnce(count));
    await kill(first);
  }, 200_000);

  it('a zombie (paused past its session timeout while its partitions moved, then resumed) is fenced: nothing it writes after is visible', async () => {
    const count = 4_000;
    const { topics, groupId } = await setUp('eos-zombie', count);
    // Slow, with a long commit interval: when it is paused, finished work waits for its transaction.
    const zombie = start(topics, groupId, {
      PARTNER_ENRICH_BATCHING__MAX_TASKS: '50',
      PARTNER_ENRICH_BATCHING__MAX_CONCURRENT_BULKS: '1',
      PARTNER_ENRICH_EXACTLY_ONCE__COMMIT_INTERVAL_MS: '3000',
    });
    await waitFor(
      async () => (await committed(topics, groupId)) >= 300,
      60_000,
      () => zombie.logs().slice(-3000),
    );
    zombie.child.kill('SIGSTOP');
    const owner = start(topics, groupId);
    // The new owner holds every partition once the zombie's session ran out, and commits.
    const before = await committed(topics, groupId);
    await waitFor(
      async () => (await committed(topics, groupId)) > before + 500,
      60_000,
      () => owner.logs().slice(-3000),
    );
    zombie.child.kill('SIGCONT');
    await waitFor(
      async () => /transaction fenced/.test(zombie.logs()),
      30_000,
      () => `the zombie's log saying it was fenced:\n${zombie.logs().slice(-3000)}`,
    );
    const outcome = await finish(topics, groupId, count, () => owner.logs());
    expect(outcome).toEqual(eachRecordOnce(count));
    await Promise.all([kill(zombie), kill(owner)]);
  }, 200_000);
});
