// Reruns as an operator runs them: `partner-enrich run` (a separate process) has enriched
// 20,000 partners; the reference data changes (the sandbox revises a share of its
// organizations); a rerun job written to the state topic looks every stored partner up
// again beside live traffic; `partner-enrich rerun` (other processes) starts, watches and
// steers it. Checked on the real broker, registry and sandbox: one
// MatchResult per partner with the rerun id, Updated events exactly where the match
// changed, the change report, resumption after SIGKILL without paying again, pause,
// resume and cancel, and a dry run that writes nothing.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaRerunJobStore } from '../../src/kafka/rerun-store.ts';
import { TopicReaders } from '../../src/kafka/topic-reader.ts';
import { matchChange, type MatchOutcome, type StoredPartner } from '../../src/pipeline/outputs.ts';
import { emptyChanges, type RerunJob, type RerunPartitionProgress } from '../../src/rerun/rerun-job.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { toJsonRecord } from '../../src/mapping/lookup-task.ts';
import { contentKey } from '../../src/sandbox/state/bulk-audit.ts';
import { distinctPartners } from '../support/run-process.ts';
import { cliEnv, runCli, startCli } from '../support/cli.ts';
import { createTopicsFor, partnerEncoder, produce, readAll, testTopics } from '../support/enrichment.ts';
import { kafkaClient, uniqueName } from '../support/kafka.ts';
import { deleteSubject, schemaRegistry } from '../support/schema-registry.ts';

const SEED = 11;
const PARTNERS = 20_000;

interface Match {
  partnerId: string;
  outcome: MatchOutcome;
  svcId: string | null;
  rerunId: string | null;
  /** The input partition (a rerun's source is its position under rerun/<id>). */
  partition: number;
}

describe('reruns over 20,000 stored partners', () => {
  const kafka: Kafka = kafkaClient();
  const registry = schemaRegistry();
  const base = uniqueName('rerun');
  const topics = testTopics('rerun');
  const stateDir = mkdtempSync(join(tmpdir(), 'rerun-test-'));
  const jobs = new KafkaRerunJobStore(new TopicReaders(kafka), topics.state);
  let sandbox: RunningSandbox;
  let dropTopics: () => Promise<void>;
  let running: { child: ChildProcess; logs: () => string; exited: Promise<number | null> } | undefined;
  let unfollow: (() => Promise<void>) | undefined;
  /** What the matches topic said last per partner, before any rerun: the baseline of change. */
  let latest = new Map<string, Match>();
  let partners: PartnerRecord[] = [];
  let encode: (partner: PartnerRecord) => Promise<Buffer>;

  const startRun = () => {
    const child = startCli(['run'], {
      ...env(),
      PARTNER_ENRICH_STATE__DIR: stateDir,
      PARTNER_ENRICH_OBSERVABILITY__LOG_LEVEL: 'info',
      // A rerun's bulks of 50 take three requests or more each: at the default 20 requests/s
      // a rerun of 20,000 partners took 80 s, the process mostly idle.
      PARTNER_ENRICH_RATE_LIMIT__REQUESTS_PER_SECOND: '200',
    });
    let logs = '';
    child.stdout?.on('data', (chunk: Buffer) => (logs += chunk));
    child.stderr?.on('data', (chunk: Buffer) => (logs += chunk));
    running = {
      child,
      logs: () => logs,
      exited: once(child, 'exit').then(([code]) => code as number | null),
    };
    return running;
  };

  const matches = async (): Promise<Match[]> =>
    Promise.all(
      (await readAll(kafka, topics.matches))
        .filter((m) => m.value !== null)
        .map(async (m) => {
          const value = (await registry.decode(m.value as Buffer)) as {
            partnerId: string;
            outcome: MatchOutcome;
            bestCandidate: { svcId: string } | null;
            rerunId: string | null;
            source: { partition: number };
          };
          const matched = value.outcome === 'MATCH' || value.outcome === 'MAYBE_MATCH';
          return {
            partnerId: value.partnerId,
            outcome: value.outcome,
            svcId: matched ? (value.bestCandidate?.svcId ?? null) : null,
            rerunId: value.rerunId,
            partition: value.source.partition,
          };
        }),
    );

  const events = async () =>
    Promise.all(
      (await readAll(kafka, topics.events))
        .filter((m) => m.value !== null)
        .map(
          async (m) =>
            (await registry.decode(m.value as Buffer)) as {
              partnerId: string;
              type: string;
              rerunId: string | null;
            },
        ),
    );

  const endOffsets = async (): Promise<string> => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const ends = await Promise.all(
        [topics.matches, topics.events, topics.storage, topics.deadLetters].map((t) =>
          admin.fetchTopicOffsets(t),
        ),
      );
      return JSON.stringify(ends.map((e) => e.map((p) => p.high)));
    } finally {
      await admin.disconnect();
    }
  };

  const progressOf = (jobId: string): RerunPartitionProgress[] => [...jobs.progress(jobId).values()];
  const read = (jobId: string) => progressOf(jobId).reduce((sum, p) => sum + p.counts.read, 0);
  const finished = (jobId: string) =>
    progressOf(jobId).length === topics.partitions && progressOf(jobId).every((p) => p.done);

  const env = () => cliEnv(sandbox.url, topics, `${base}-group`);
  /** `partner-enrich rerun <args>` as an operator types it, in a process of its own. */
  const rerunCli = async (...args: string[]) => {
    const result = await runCli(['rerun', ...args], env());
    if (result.code !== 0) throw new Error(`rerun ${args.join(' ')}: exit ${result.code}\n${result.stderr}`);
    return result.stdout;
  };
  /** Starts a job from the CLI; resolves once this test's follower has read it. */
  const startJob = async (...flags: string[]): Promise<RerunJob> => {
    const id = uniqueName('job');
    await rerunCli('start', '--id', id, '--batch-size', '250', '--quota-share', '1', ...flags);
    await waitFor(
      () => jobs.job(id) !== undefined,
      30_000,
      () => `job ${id} in the state topic`,
    );
    return jobs.job(id) as RerunJob;
  };

  const revise = async (seed: number, share: number) => {
    const response = await fetch(`${sandbox.url}/admin/dataset/revise`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ seed, share, kinds: ['relisted', 'withdrawn', 'reclassified'] }),
    });
    expect(response.status).toBe(200);
  };

  const stats = async () =>
    (await (await fetch(`${sandbox.url}/admin/stats`)).json()) as {
      quotaConsumed: number;
      bulkTasks: number;
    };

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, orgs: PARTNERS, seed: SEED });
    dropTopics = await createTopicsFor(kafka, topics);
    encode = await partnerEncoder(registry, topics.input);
    partners = distinctPartners(PARTNERS, SEED);
    await produce(
      kafka,
      topics.input,
      await Promise.all(partners.map(async (p) => ({ key: p.partnerId, value: await encode(p) }))),
    );
    await jobs.load();
    unfollow = await jobs.follow(
      () => {},
      () => {},
    );
    startRun();
    await waitFor(
      async () => (await matches()).length >= PARTNERS,
      240_000,
      () => `the first run's MatchResults: ${running?.logs().slice(-3000)}`,
    );
    latest = new Map((await matches()).map((m) => [m.partnerId, m]));
  }, 400_000);

  afterAll(async () => {
    running?.child.kill('SIGKILL');
    await unfollow?.();
    await jobs.close();
    await dropTopics?.();
    await sandbox?.close();
    for (const t of [topics.input, topics.matches, topics.events, topics.storage])
      await deleteSubject(`${t}-value`);
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('looks every stored partner up again: one MatchResult each with the rerun id, Updated exactly where the match changed, the change report', async () => {
    await revise(1, 0.2);
    const before = await stats();
    const id = uniqueName('job');
    const ended = JSON.parse(
      await rerunCli('start', '--id', id, '--batch-size', '250', '--quota-share', '1', '--wait', '--json'),
    ) as { status: string; progress: number; counts: { read: number; changed: number }; changes: unknown };
    const job = { id };
    expect(ended.status).toBe('FINISHED');
    expect(ended.progress).toBe(100);
    expect(running?.logs()).toContain('rerun share of the partition done');

    const results = (await matches()).filter((m) => m.rerunId === job.id);
    const perPartner = new Map<string, number>();
    for (const r of results) perPartner.set(r.partnerId, (perPartner.get(r.partnerId) ?? 0) + 1);
    expect(perPartner.size).toBe(PARTNERS);
    expect([...perPartner.values()].every((n) => n === 1)).toBe(true);

    const expected = emptyChanges();
    const changed = new Set<string>();
    for (const r of results) {
      const was = latest.get(r.partnerId) as Match;
      const change = matchChange(stored(was), stored(r));
      if (change) {
        expected[change] += 1;
        changed.add(r.partnerId);
      }
    }
    expect(changed.size).toBeGreaterThan(PARTNERS * 0.05);
    const updated = (await events()).filter((e) => e.rerunId === job.id);
    expect(updated.every((e) => e.type === 'BusinessPartnerUpdated')).toBe(true);
    expect(new Set(updated.map((e) => e.partnerId))).toEqual(changed);
    expect(updated.length).toBe(changed.size);

    // The change report, as `rerun start --wait` printed it when the job ended.
    expect(ended.changes).toEqual(expected);
    expect({ read: ended.counts.read, changed: ended.counts.changed }).toEqual({
      read: PARTNERS,
      changed: changed.size,
    });
    const after = await stats();
    expect(after.quotaConsumed - before.quotaConsumed).toBe(PARTNERS);
    for (const r of results) latest.set(r.partnerId, r);
  }, 300_000);

  it('killed with SIGKILL at about half and started again, completes without looking up again what was committed', async () => {
    await revise(2, 0.1);
    const before = await stats();
    const job = await startJob();
    await waitFor(
      () => read(job.id) >= PARTNERS / 2,
      240_000,
      () => `half of rerun ${job.id}`,
    );
    // Killed while a chunk's outputs are written and its progress is not: the case that left
    // the counts short. Checked on the process frozen (SIGSTOP), once this reader of the state
    // topic has what it sent before, so that the kill leaves what was seen: checked on the
    // running process, the progress could land between the check and the kill (CI at 271ce30:
    // 10,250 outputs and 10,250 recorded at the kill, and the assertion below failed).
    await waitFor(
      async () => {
        running?.child.kill('SIGSTOP');
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const ahead = (await matches()).filter((m) => m.rerunId === job.id).length > read(job.id);
        if (!ahead) running?.child.kill('SIGCONT');
        return ahead;
      },
      60_000,
      () => `outputs of rerun ${job.id} ahead of its progress`,
    );
    running?.child.kill('SIGKILL');
    await running?.exited;
    // What the killed process recorded: the last partner id of each partition's last chunk.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const committed = read(job.id);
    const writtenAtKill = (await matches()).filter((m) => m.rerunId === job.id).length;
    const recordedUpTo = new Map(progressOf(job.id).map((p) => [p.partition, p.lastPartnerId ?? '']));
    startRun();
    await waitFor(
      () => finished(job.id),
      240_000,
      () => `rerun ${job.id} after the restart: ${running?.logs().slice(-3000)}`,
    );
    const after = await stats();
    expect(committed).toBeGreaterThanOrEqual(PARTNERS / 2);
    const results = (await matches()).filter((m) => m.rerunId === job.id);
    expect(new Set(results.map((r) => r.partnerId)).size).toBe(PARTNERS);
    // Lookups paid more than once by this rerun, from the sandbox's audit of every bulk. The
    // audit knows tasks by content: partners with the same content share a key.
    const partnersOf = new Map<string, string[]>();
    for (const p of partners) {
      const key = contentKey(toJsonRecord(p));
      partnersOf.set(key, [...(partnersOf.get(key) ?? []), p.partnerId]);
    }
    const audit = (await (await fetch(`${sandbox.url}/admin/bulk-audit`)).json()) as {
      bulks: { createdAt: number; tasks: { contentKey: string }[] }[];
    };
    const lookups = new Map<string, number>();
    for (const bulk of audit.bulks.filter((b) => b.createdAt >= job.createdAt))
      for (const task of bulk.tasks) lookups.set(task.contentKey, (lookups.get(task.contentKey) ?? 0) + 1);
    const paidAgain = [...lookups].filter(([key, n]) => n > (partnersOf.get(key)?.length ?? 1));
    // None of them for partners all in chunks recorded before the kill: only the chunks under
    // way then (a kill between a quota consume and the intent's record of it is the one way
    // to pay again).
    const partitionOf = new Map(results.map((r) => [r.partnerId, r.partition]));
    const recordedBefore = (id: string) => id <= (recordedUpTo.get(partitionOf.get(id) as number) ?? '');
    const recorded = paidAgain.filter(([key]) => (partnersOf.get(key) ?? []).every(recordedBefore));
    console.info(
      `rerun killed at ${committed} of ${PARTNERS} recorded: ${after.quotaConsumed - before.quotaConsumed} quota units, ` +
        `${paidAgain.length} lookups paid again (chunks under way at the kill)`,
    );
    expect(recorded).toEqual([]);
    expect(after.quotaConsumed - before.quotaConsumed).toBeLessThanOrEqual(
      PARTNERS + topics.partitions * job.batchSize,
    );
    expect(paidAgain.length).toBeLessThanOrEqual(topics.partitions * job.batchSize);

    // regression: after the kill the counts fell short of the job's MatchResults by the
    // partners whose outputs the lost chunk wrote (not looked up again, not counted either:
    // 2,637 counted for 2,687 MatchResults); now those are counted by their stored mark.
    expect(writtenAtKill).toBeGreaterThan(committed);
    const shares = progressOf(job.id);
    const counts = shares.reduce(
      (sum, p) => sum + p.counts.lookedUp + p.counts.failed + p.counts.superseded,
      0,
    );
    expect({ read: read(job.id), counts }).toEqual({ read: results.length, counts: results.length });
    const expected = emptyChanges();
    for (const r of results) {
      const change = matchChange(stored(latest.get(r.partnerId) as Match), stored(r));
      if (change) expected[change] += 1;
    }
    const changes = emptyChanges();
    for (const share of shares)
      for (const kind of Object.keys(changes) as (keyof typeof changes)[])
        changes[kind] += share.changes[kind];
    expect(changes).toEqual(expected);
    for (const r of results) latest.set(r.partnerId, r);
  }, 400_000);

  it('pauses, resumes and cancels from another process', async () => {
    const job = await startJob('--batch-size', '50');
    await waitFor(
      () => read(job.id) >= 1_000,
      120_000,
      () => `progress of ${job.id}`,
    );
    await rerunCli('pause', job.id);
    // What was under way at the pause ends; then nothing moves.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const paused = read(job.id);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(read(job.id)).toBe(paused);
    expect(paused).toBeLessThan(PARTNERS);
    expect(JSON.parse(await rerunCli('status', job.id, '--json'))).toMatchObject({
      status: 'RUNNING',
      paused: true,
    });
    await rerunCli('resume', job.id);
    await waitFor(
      () => read(job.id) > paused,
      60_000,
      () => `${job.id} resumed`,
    );
    await rerunCli('cancel', job.id);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const canceled = read(job.id);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(read(job.id)).toBe(canceled);
    expect(finished(job.id)).toBe(false);
    expect(JSON.parse(await rerunCli('status', job.id, '--json'))).toMatchObject({ status: 'CANCELED' });
  }, 300_000);

  it('lets live records win: a partner updated while the rerun runs ends with the live content', async () => {
    const job = await startJob('--batch-size', '100');
    await waitFor(
      () => read(job.id) >= 2_000,
      120_000,
      () => `progress of ${job.id}`,
    );
    // 2,000 partners change upstream while the rerun goes through them, spread over the id order.
    const updated = partners
      .filter((_, i) => i % 10 === 3)
      .map((p) => ({ ...p, names: [`${p.names[0]} Live`] }));
    await produce(
      kafka,
      topics.input,
      await Promise.all(updated.map(async (p) => ({ key: p.partnerId, value: await encode(p) }))),
    );
    // What this test is about: the live records arrive while the rerun goes on.
    expect(finished(job.id)).toBe(false);
    await waitFor(
      () => finished(job.id),
      240_000,
      () => `rerun ${job.id} beside live records`,
    );
    const live = new Set(updated.map((p) => p.partnerId));
    await waitFor(
      async () => {
        const results = await matches();
        return results.filter((m) => m.rerunId === null && live.has(m.partnerId)).length >= 2 * live.size;
      },
      120_000,
      () => 'the live MatchResults',
    );
    const counts = progressOf(job.id).reduce(
      (sum, p) => ({ read: sum.read + p.counts.read, superseded: sum.superseded + p.counts.superseded }),
      { read: 0, superseded: 0 },
    );
    const rerunResults = (await matches()).filter((m) => m.rerunId === job.id);
    // Each partner the rerun took is looked up by it, or left to a live record that came first.
    expect(rerunResults.length + counts.superseded).toBe(counts.read);
    // A partner it did not take was looked up by a live record since the rerun started.
    const takenByRerun = new Set(rerunResults.map((r) => r.partnerId));
    const left = partners.filter((p) => !takenByRerun.has(p.partnerId)).map((p) => p.partnerId);
    expect(left.filter((id) => !live.has(id))).toEqual([]);
    expect(counts.read).toBeGreaterThan(PARTNERS - live.size - 1);
    const storedNames = new Map<string, string>();
    for (const message of await readAll(kafka, topics.storage)) {
      if (message.value === null) continue;
      const value = (await registry.decode(message.value)) as { partnerId: string; record: PartnerRecord };
      storedNames.set(value.partnerId, value.record.names[0] as string);
    }
    const stale = updated.filter((p) => storedNames.get(p.partnerId) !== p.names[0]).map((p) => p.partnerId);
    expect(stale).toEqual([]);
  }, 400_000);

  it('a dry run looks up and reports, and writes no output', async () => {
    await revise(3, 0.1);
    const offsets = await endOffsets();
    const job = await startJob('--dry-run');
    await waitFor(
      () => finished(job.id),
      240_000,
      () => `dry run ${job.id}`,
    );
    expect(read(job.id)).toBe(PARTNERS);
    const report = progressOf(job.id).reduce((sum, p) => sum + p.counts.changed, 0);
    expect(report).toBeGreaterThan(0);
    expect(await endOffsets()).toBe(offsets);
  }, 300_000);
});

/** Resolves once `holds` does, polling every 200 ms; fails with `what` after `timeoutMs`. */
async function waitFor(
  holds: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await holds())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const stored = (m: Match): StoredPartner => ({ outcome: m.outcome, svcId: m.svcId }) as StoredPartner;
