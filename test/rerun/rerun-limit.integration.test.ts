// `rerun start --limit` through a kill: `partner-enrich run` (a separate process) has enriched
// 2,000 partners; under a quota small enough that a chunk takes seconds (set through the
// sandbox's identity API), it is killed with SIGKILL while a chunk's outputs are being
// written and started again. Counted from the MatchResults on the real broker.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaRerunJobStore } from '../../src/kafka/rerun-store.ts';
import { setOrganizationQuota, startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { cliEnv, runCli } from '../support/cli.ts';
import { createTopicsFor, producePartners, readAll, testTopics } from '../support/enrichment.ts';
import { kafkaClient, uniqueName } from '../support/kafka.ts';
import {
  distinctPartners,
  killHard,
  startCollected,
  waitFor,
  type RunningCli,
} from '../support/run-process.ts';
import { deleteSubject, schemaRegistry } from '../support/schema-registry.ts';

const PARTNERS = 2_000;
const LIMIT = 300;

describe('a rerun with --limit, killed mid-chunk', () => {
  const kafka = kafkaClient();
  const registry = schemaRegistry();
  const topics = testTopics('rerun-limit');
  const stateDir = mkdtempSync(join(tmpdir(), 'rerun-limit-'));
  const jobs = new KafkaRerunJobStore(kafka, topics.state);
  let sandbox: RunningSandbox;
  let dropTopics: () => Promise<void>;
  let running: RunningCli | undefined;

  const env = () => cliEnv(sandbox.url, topics, `${topics.input}-group`);
  const startRun = () =>
    (running = startCollected(['run'], { ...env(), PARTNER_ENRICH_STATE__DIR: stateDir }));
  /** Each MatchResult's partner, rerun id and input partition (a rerun's source is its position under rerun/<id>). */
  const results = async () =>
    Promise.all(
      (await readAll(kafka, topics.matches)).map(async (m) => {
        const value = (await registry.decode(m.value as Buffer)) as {
          partnerId: string;
          rerunId: string | null;
          source: { partition: number };
        };
        return { partnerId: value.partnerId, rerunId: value.rerunId, partition: value.source.partition };
      }),
    );
  const recorded = (jobId: string) =>
    [...jobs.progress(jobId).values()].reduce((sum, p) => sum + p.counts.read, 0);

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, orgs: PARTNERS, seed: 13 });
    dropTopics = await createTopicsFor(kafka, topics);
    await producePartners(kafka, registry, topics.input, distinctPartners(PARTNERS, 13));
    await jobs.load();
    startRun();
    await waitFor(
      async () => (await results()).length >= PARTNERS,
      180_000,
      () => `the first run: ${running?.logs().slice(-2000)}`,
    );
  }, 300_000);

  afterAll(async () => {
    if (running) await killHard(running);
    await jobs.close();
    await dropTopics?.();
    await sandbox?.close();
    for (const t of [topics.input, topics.matches, topics.events, topics.storage])
      await deleteSubject(`${t}-value`);
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('regression: a share killed mid-chunk read past --limit after its restart; now it stops at the limit', async () => {
    await setOrganizationQuota(sandbox.url, 150, '1');
    const id = uniqueName('limit');
    const started = await runCli(
      ['rerun', 'start', '--id', id, '--limit', String(LIMIT), '--batch-size', '250', '--quota-share', '1'],
      env(),
    );
    expect(started.code, started.stderr).toBe(0);
    const unfollow = await jobs.follow(() => {});
    try {
      // Killed while a chunk's outputs are being written, before its progress is: the partners
      // it wrote were looked up since the share's start, and are not chosen again.
      await waitFor(
        async () => (await results()).filter((r) => r.rerunId === id).length >= recorded(id) + 50,
        120_000,
        () => `outputs of ${id} ahead of its progress`,
      );
      await killHard(running as RunningCli);
      startRun();
      await waitFor(
        async () =>
          jobs.progress(id).size === topics.partitions &&
          [...jobs.progress(id).values()].every((p) => p.done),
        180_000,
        () => `rerun ${id} after the restart: ${running?.logs().slice(-2000)}`,
      );
    } finally {
      await unfollow();
    }
    const perPartition = new Map<number, Set<string>>();
    for (const r of (await results()).filter((m) => m.rerunId === id))
      perPartition.set(r.partition, (perPartition.get(r.partition) ?? new Set()).add(r.partnerId));
    const lookedUp = [...perPartition.values()].map((ids) => ids.size);
    expect(lookedUp.length).toBe(topics.partitions);
    expect(lookedUp.filter((n) => n > LIMIT)).toEqual([]);
  }, 400_000);
});
