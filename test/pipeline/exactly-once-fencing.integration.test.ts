// Exactly-once on the real broker: a partition's producer fenced while this member still owns
// it. Fencing without a rebalance (a transaction the broker aborted past its timeout, a former
// owner's producer start landing late after back-to-back rebalances) left the partition idle
// on this member for good while the process looked healthy; the pipeline now fails within the
// consumer's session timeout unless the group moves (and then it goes on).
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createKafkaEnrichment, type Enrichment } from '../../src/cli/enrichment.ts';
import type { KafkaPartitionTransactions } from '../../src/kafka/partition-transactions.ts';
import { combineObservers, type PartitionRef } from '../../src/pipeline/ports.ts';
import { RunSummary } from '../../src/pipeline/run-summary.ts';
import { committedAndEndOffsets, testConfig, waitForFinished } from '../support/enrichment.ts';
import { eventually } from '../support/kafka.ts';
import { plainTransactions } from '../support/plain-transactions.ts';
import { scenario, type Scenario } from '../support/scenario.ts';

/** The broker's group.min.session.timeout.ms (Kafka's default; deploy/local does not change it). */
const SESSION_TIMEOUT_MS = 6_000;
const PARTNERS = 30;

const opened: { enrichment?: Enrichment; stray?: KafkaPartitionTransactions }[] = [];
afterEach(async () => {
  for (const { enrichment, stray } of opened.splice(0)) {
    await stray?.closeAll();
    await enrichment?.stop(0).catch(() => {});
  }
});

/** An exactly-once pipeline that processed the scenario's records and is idle, every partition's producer started. */
async function idlePipeline(s: Scenario) {
  const config = testConfig(s.sandbox.url, s.topics, {
    delivery: 'exactly-once',
    exactlyOnce: { commitIntervalMs: 200 },
    kafka: { sessionTimeoutMs: SESSION_TIMEOUT_MS },
  });
  const summary = new RunSummary();
  const events = { fencedAt: 0, assignments: 0 };
  const enrichment = await createKafkaEnrichment(
    config,
    combineObservers(summary, {
      fenced: () => (events.fencedAt = Date.now()),
      partitionsAssigned: () => (events.assignments += 1),
    }),
  );
  opened.push({ enrichment });
  await enrichment.pipeline.start();
  await waitForFinished(() => summary.finished, PARTNERS, 60_000);
  const { groupId } = config.kafka;
  const caughtUp = async () => {
    const { committed, end } = await committedAndEndOffsets(s.kafka, groupId, s.topics.input);
    return JSON.stringify(committed) === JSON.stringify(end);
  };
  for (const deadline = Date.now() + 30_000; !(await caughtUp()); await delay(100))
    if (Date.now() > deadline) throw new Error('the pipeline did not commit its records');
  return { enrichment, summary, events, groupId, caughtUp };
}

/** Starts a producer with the partition's transactional id, as a former owner's late start does. */
async function fence(s: Scenario, groupId: string, ref: PartitionRef): Promise<KafkaPartitionTransactions> {
  const stray = plainTransactions(s.kafka, groupId, s.topics.matches);
  await stray.open(ref);
  return stray;
}

/** A record for the partition: not Avro, so dead-lettered, in the partition's next transaction. */
async function feed(s: Scenario, ref: PartitionRef): Promise<void> {
  const producer = s.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    await producer.send({
      topic: ref.topic,
      acks: -1,
      messages: [{ partition: ref.partition, key: 'NOT-AVRO', value: Buffer.from('not avro') }],
    });
  } finally {
    await producer.disconnect();
  }
}

describe('delivery exactly-once: a partition fenced while this member owns it', () => {
  it('regression: fenced without any rebalance, the pipeline fails with PARTITION_FENCED within the session timeout (it kept running with the partition idle for good)', async () => {
    const s = await scenario('fenced-idle', PARTNERS);
    const { enrichment, events, groupId } = await idlePipeline(s);
    const ref = { topic: s.topics.input, partition: 0 };
    const assignments = events.assignments;
    const stray = await fence(s, groupId, ref);
    opened.push({ stray });
    await feed(s, ref);
    await eventually(() => events.fencedAt > 0, 30_000, "the pipeline's transaction fenced");

    const outcome = await Promise.race([
      enrichment.pipeline.failed,
      delay(SESSION_TIMEOUT_MS + 10_000).then(() => 'still running, the partition idle'),
    ]);
    const failedAt = Date.now();
    expect(outcome).toMatchObject({
      code: 'PARTITION_FENCED',
      cause: { code: 'TRANSACTION_FENCED' },
      details: { topic: ref.topic, partition: 0, waitedMs: SESSION_TIMEOUT_MS },
    });
    expect(failedAt - events.fencedAt).toBeGreaterThanOrEqual(SESSION_TIMEOUT_MS - 50);
    expect(failedAt - events.fencedAt).toBeLessThan(SESSION_TIMEOUT_MS + 3_000);
    // Nothing moved in the group meanwhile: this was fencing without a rebalance.
    expect(events.assignments).toBe(assignments);
  }, 120_000);

  it('fenced, then the group rebalances within the session timeout: the pipeline goes on and processes the partition again', async () => {
    const s = await scenario('fenced-moved', PARTNERS);
    const { enrichment, events, groupId, caughtUp } = await idlePipeline(s);
    const ref = { topic: s.topics.input, partition: 0 };
    const stray = await fence(s, groupId, ref);
    opened.push({ stray });
    await feed(s, ref);
    await eventually(() => events.fencedAt > 0, 30_000, "the pipeline's transaction fenced");
    // A member joins the group and leaves again: two rebalances; partition 0 ends up here and
    // its producer's start fences the stray one. The joiner processes and commits nothing.
    const assignments = events.assignments;
    const joiner = s.kafka.consumer({ groupId, sessionTimeout: SESSION_TIMEOUT_MS });
    await joiner.connect();
    try {
      await joiner.subscribe({ topic: s.topics.input, fromBeginning: true });
      await joiner.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: async () => {} });
      await eventually(() => events.assignments > assignments, 30_000, 'the rebalance the joiner caused');
    } finally {
      await joiner.disconnect();
    }
    const outcome = await Promise.race([
      enrichment.pipeline.failed,
      (async () => {
        for (const deadline = Date.now() + 30_000; !(await caughtUp()); await delay(100))
          if (Date.now() > deadline) return 'the fed record was not committed';
        // Past the bound since the fencing: no failure left armed.
        await delay(Math.max(0, events.fencedAt + SESSION_TIMEOUT_MS + 1_000 - Date.now()));
        return 'going on';
      })(),
    ]);
    expect(outcome).toBe('going on');
    expect(enrichment.pipeline.failure).toBeUndefined();
  }, 120_000);
});
