// The rebalance flush on the real broker: this member's transaction of a partition races the
// producer start of the partition's next owner. Kafka does not always answer the loser with
// a fencing error: CONCURRENT_TRANSACTIONS, and UNKNOWN_SERVER_ERROR while the coordinator
// fences the epoch (Kafka 4.4), come too. None of them may stop the member (CI stop 24: the
// exactly-once "second replica joins" run stalled as its first replica exited on one).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BulkLedger, memoryLedgerStore } from '../../src/bulk/bulk-ledger.ts';
import type { BulkRunner } from '../../src/bulk/bulk-runner.ts';
import { Committer } from '../../src/pipeline/committer.ts';
import { OutputStaging } from '../../src/pipeline/output-staging.ts';
import type { RecordSource } from '../../src/pipeline/ports.ts';
import { PartnerState } from '../../src/state/partner-state.ts';
import { kafkaClient, setTopicLimit, uniqueName, withTopics } from '../support/kafka.ts';
import { plainTransactions } from '../support/plain-transactions.ts';

/**
 * Until a race was lost otherwise than fenced, within these bounds: about one round in a
 * hundred is (below), so the bound leaves a run without one practically impossible.
 */
const MIN_ROUNDS = 40;
const MAX_ROUNDS = 2_500;

describe('the committer during a rebalance, on the real broker', () => {
  const kafka: Kafka = kafkaClient();
  let cleanup: () => Promise<void>;
  let input: string;
  let output: string;
  let dir: string;
  let state: PartnerState;

  beforeAll(async () => {
    const base = uniqueName('race');
    input = `${base}.in`;
    output = `${base}.out`;
    ({ cleanup } = await withTopics(kafka, [
      { topic: input, numPartitions: 1 },
      { topic: output, numPartitions: 1 },
    ]));
    dir = await mkdtemp(join(tmpdir(), 'committer-race-'));
    state = new PartnerState({ dir });
  });

  afterAll(async () => {
    state?.close();
    await rm(dir, { recursive: true, force: true });
    await cleanup?.();
  });

  it("a transaction that loses the race with the partition's next owner never stops the member", async () => {
    const groupId = uniqueName('race-group');
    const ref = { topic: input, partition: 0 };
    const here = plainTransactions(kafka, groupId, output);
    const next = plainTransactions(kafka, groupId, output);
    const staging = new OutputStaging();
    const verdicts: string[] = [];
    const committer = new Committer(
      {
        // Neither is used in exactly-once mode while no ledger entry is released.
        source: {} as RecordSource,
        state,
        runner: {} as BulkRunner,
        ledger: new BulkLedger(memoryLedgerStore()),
        observer: { committed: () => verdicts.push('committed') },
        transactional: {
          outputs: here,
          staging,
          state,
          fenced: () => verdicts.push('fenced'),
          abandoned: (_, error) => verdicts.push(`abandoned: ${error.message}`),
          fail: (error) => verdicts.push(`fatal: ${error.message}`),
        },
      },
      60_000,
    );
    const lostOtherwise = () => verdicts.filter((v) => v.startsWith('abandoned') || v.startsWith('fatal'));
    let round = 0;
    try {
      for (; round < MAX_ROUNDS && (round < MIN_ROUNDS || lostOtherwise().length === 0); round += 1) {
        // This member holds the partition and finished a record whose output waits for the commit.
        await here.open(ref);
        const position = { ...ref, offset: round };
        committer.watermark.track(position);
        staging.stage(ref, round, here.prepare([{ output: 'matches', key: `k${round}`, value: null }]));
        committer.done([position]);
        // The group rebalances: the flush commits while the next owner starts its producer.
        committer.rebalancing();
        const flushed = committer.settled();
        // Measured here: lost otherwise than fenced in 6 of 100 rounds whose next owner started
        // 3-7 ms after the flush, in 7 of 500 over 0-24 ms; later (2026-11-28) in 10 of 1,000
        // over 2-9 ms, 1 of 600 over 0-31 ms, and none of 600 over 0-15 ms in a loaded CI run.
        await delay(2 + (round % 8));
        const taken = next.open(ref).catch(() => {});
        await Promise.all([flushed, taken]);
        // This member learns the partition went to the next owner.
        committer.revoke(ref);
        committer.assigned();
        await Promise.all([here.close(ref), next.close(ref)]);
        // A verdict judged at the assignment comes a microtask later.
        await delay(0);
      }
    } finally {
      await Promise.all([here.closeAll(), next.closeAll()]);
    }
    expect(verdicts.filter((v) => v.startsWith('fatal'))).toEqual([]);
    // The race was lost otherwise than fenced at least once, or this proved nothing.
    expect(lostOtherwise().length, `${round} rounds: ${JSON.stringify(verdicts)}`).toBeGreaterThan(0);
  }, 300_000);

  it("regression: a failed transaction's outputs are not skipped by the partition's next transaction (it committed the position past them: records lost)", async () => {
    // Its own output topic: the limit is lowered below one output after start.
    const base = uniqueName('failed');
    const refused = `${base}.out`;
    const topics = await withTopics(kafka, [{ topic: refused, numPartitions: 1 }]);
    const groupId = `${base}-group`;
    const ref = { topic: input, partition: 0 };
    const txns = plainTransactions(kafka, groupId, refused);
    const staging = new OutputStaging();
    const verdicts: string[] = [];
    const committer = new Committer(
      {
        source: {} as RecordSource,
        state,
        runner: {} as BulkRunner,
        ledger: new BulkLedger(memoryLedgerStore()),
        observer: {},
        transactional: {
          outputs: txns,
          staging,
          state,
          fenced: () => verdicts.push('fenced'),
          abandoned: () => verdicts.push('abandoned'),
          fail: (error) => verdicts.push(`fatal: ${(error as { code?: string }).code}`),
        },
      },
      60_000,
    );
    try {
      await txns.open(ref);
      await setTopicLimit(kafka, refused, 16 * 1024);
      for (const offset of [0, 1]) committer.watermark.track({ ...ref, offset });
      // Record 0's output is refused by the broker; its transaction is aborted.
      staging.stage(ref, 0, txns.prepare([{ output: 'matches', key: 'x'.repeat(20_000), value: null }]));
      committer.done([{ ...ref, offset: 0 }]);
      const sent = Promise.withResolvers<undefined>();
      const commit = txns.commit.bind(txns);
      txns.commit = (...args) => {
        sent.resolve(undefined);
        return commit(...args);
      };
      const first = committer.flush();
      await sent.promise;
      // Record 1 finishes while that transaction runs; the next interval commits what is pending.
      staging.stage(ref, 1, txns.prepare([{ output: 'matches', key: 'small', value: null }]));
      committer.done([{ ...ref, offset: 1 }]);
      await first;
      await committer.flush();
      expect(verdicts).toContain('fatal: OUTPUT_REFUSED_AS_TOO_LARGE');
    } finally {
      committer.close();
      await txns.closeAll();
    }
    const admin = kafka.admin();
    await admin.connect();
    try {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [input] });
      // Nothing committed past record 0, whose output is in no committed transaction: a
      // restart reads it again.
      expect(committed?.partitions).toEqual([{ partition: 0, offset: '-1', metadata: null }]);
    } finally {
      await admin.disconnect();
      await topics.cleanup();
    }
  }, 60_000);
});
