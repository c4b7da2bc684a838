// Reruns under a quota small enough that a chunk takes many windows (set through the
// sandbox's identity API): `partner-enrich run` (a separate process) has enriched 2,000
// partners; reruns started with `partner-enrich rerun` go beside a SIGKILL and live records.
// Counted from the MatchResults on the real broker.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaRerunJobStore } from '../../src/kafka/rerun-store.ts';
import { TopicReaders } from '../../src/kafka/topic-reader.ts';
import { setOrganizationQuota, startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { cliEnv, runCli } from '../support/cli.ts';
import {
  createTopicsFor,
  partnerEncoder,
  produce,
  producePartners,
  readAll,
  testTopics,
} from '../support/enrichment.ts';
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
const partners = distinctPartners(PARTNERS, 13);

describe('reruns under a quota smaller than a chunk', () => {
  const kafka = kafkaClient();
  const registry = schemaRegistry();
  const topics = testTopics('rerun-quota');
  const stateDir = mkdtempSync(join(tmpdir(), 'rerun-quota-'));
  const jobs = new KafkaRerunJobStore(new TopicReaders(kafka), topics.state);
  let sandbox: RunningSandbox;
  let dropTopics: () => Promise<void>;
  let running: RunningCli | undefined;

  const env = () => cliEnv(sandbox.url, topics, `${topics.input}-group`);
  const startRun = () =>
    (running = startCollected(['run'], { ...env(), PARTNER_ENRICH_STATE__DIR: stateDir }));
  /** The MatchResults in the order written per partner; a rerun's source is its position under rerun/<id>. */
  const results = async () =>
    Promise.all(
      (await readAll(kafka, topics.matches)).map(async (m) => {
        const value = (await registry.decode(m.value as Buffer)) as {
          partnerId: string;
          rerunId: string | null;
          reused: boolean;
          processedAt: number;
          source: { partition: number };
        };
        return {
          partnerId: value.partnerId,
          rerunId: value.rerunId,
          reused: value.reused,
          processedAt: Number(value.processedAt),
          partition: value.source.partition,
        };
      }),
    );
  const recorded = (jobId: string) =>
    [...jobs.progress(jobId).values()].reduce((sum, p) => sum + p.counts.read, 0);

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, orgs: PARTNERS, seed: 13 });
    dropTopics = await createTopicsFor(kafka, topics);
    await producePartners(kafka, registry, topics.input, partners);
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
    const unfollow = await jobs.follow(
      () => {},
      () => {},
    );
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

  it('regression: a live record whose partner had a rerun copy waiting for the quota was held behind it; now it replaces the copy', async () => {
    await setOrganizationQuota(sandbox.url, 100, '2');
    const id = uniqueName('live-first');
    const rerunBegan = Date.now();
    // A tenth of each 100-unit window: the copies of each partition's first chunk (500, in
    // bulks of 50) wait for their share for many windows.
    const started = await runCli(
      ['rerun', 'start', '--id', id, '--batch-size', '500', '--quota-share', '0.1'],
      env(),
    );
    expect(started.code, started.stderr).toBe(0);
    const unfollow = await jobs.follow(
      () => {},
      () => {},
    );
    try {
      await waitFor(
        async () => jobs.progress(id).size === topics.partitions,
        60_000,
        () => `the shares of ${id}`,
      );
      // Partners in the middle of their partition's first chunk (each partition holds about a
      // third of the ids): 40 change upstream, 40 are re-sent as they are.
      const middle = partners.toSorted((a, b) => (a.partnerId < b.partnerId ? -1 : 1)).slice(600, 680);
      const sent = [
        ...middle.slice(0, 40).map((p) => ({ ...p, names: [`${p.names[0]} Live`] })),
        ...middle.slice(40),
      ];
      const encode = await partnerEncoder(registry, topics.input);
      const sentAt = Date.now();
      await produce(
        kafka,
        topics.input,
        await Promise.all(sent.map(async (p) => ({ key: p.partnerId, value: await encode(p) }))),
      );
      // Five windows under the small quota, then enough for the rerun to end.
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      await setOrganizationQuota(sandbox.url, 100_000, '1');
      expect((await runCli(['rerun', 'throttle', id, '--quota-share', '1'], env())).code).toBe(0);
      await waitFor(
        async () =>
          jobs.progress(id).size === topics.partitions &&
          [...jobs.progress(id).values()].every((p) => p.done),
        180_000,
        () => `rerun ${id}: ${running?.logs().slice(-2000)}`,
      );
      const ids = new Set(middle.map((p) => p.partnerId));
      const ofMiddle = (await results()).filter((r) => ids.has(r.partnerId));
      const byPartner = new Map<string, typeof ofMiddle>();
      for (const r of ofMiddle.filter((m) => m.processedAt >= sentAt))
        byPartner.set(r.partnerId, [...(byPartner.get(r.partnerId) ?? []), r]);
      // Held behind the rerun's copy, the live record's result came after the rerun's.
      const held = [...byPartner].filter(([, rs]) => rs[0]?.rerunId === id).map(([partnerId]) => partnerId);
      expect(held).toEqual([]);
      // None is left with a match answered from the storage after the rerun began: a re-send
      // that replaced the rerun's copy is looked up, not answered with the match to refresh.
      // A re-send answered from the storage after the rerun looked its partner up (before the
      // re-send came, or with its copy paid for) gets the refreshed match: not stale.
      const lookedUp = new Set(
        ofMiddle.filter((r) => r.processedAt >= rerunBegan && !r.reused).map((r) => r.partnerId),
      );
      const stale = middle.filter((p) => !lookedUp.has(p.partnerId));
      expect(stale.map((p) => p.partnerId)).toEqual([]);
    } finally {
      await unfollow();
    }
  }, 400_000);
});
