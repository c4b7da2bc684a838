// Two members of one consumer group on the real broker, with bulks in flight while
// partitions move between them: nothing is lost, no task is paid for twice, commits reach
// the end, and every ledger entry is released by whoever committed its partition.
import { describe, expect, it } from 'vitest';
import { createKafkaEnrichment } from '../../src/cli/enrichment.ts';
import { RunSummary } from '../../src/pipeline/run-summary.ts';
import { committedAndEndOffsets, readAll, testConfig } from '../support/enrichment.ts';
import { eventually } from '../support/kafka.ts';
import { matchResults, scenario } from '../support/scenario.ts';

describe('two replicas in one group', () => {
  it('regression: rebalances pay no task twice and leave no ledger entry behind', async () => {
    // Slow enough (every request 400 ms) that the first member still has most of the input
    // when the second has joined: a join waits for the first to notice the rebalance, which
    // can take the whole fetch wait (5 s) plus a heartbeat interval.
    const s = await scenario('rebalance', 3_000, { faults: { latencyMs: 400 } });
    const config = testConfig(s.sandbox.url, s.topics, {
      batching: { maxTasks: 100, maxConcurrentBulks: 4, lingerMs: 100 },
      kafka: { sessionTimeoutMs: 10_000 },
    });
    const stats = () => s.sandbox.state.stats.snapshot();

    const first = await createKafkaEnrichment(config, new RunSummary());
    await first.pipeline.start();
    await eventually(() => stats().bulkSubmissions >= 3, 60_000, 'bulks of the first replica');
    // The second member joins while the first has bulks in flight and work queued.
    const joined = new RunSummary();
    const second = await createKafkaEnrichment(config, joined);
    await second.pipeline.start();
    // The second member took partitions over and read records of them (anew, or the first
    // member's, resuming their bulks); only then does the first leave.
    await eventually(() => joined.recordsIn > 0, 60_000, 'records read by the member that joined');
    // The first leaves: its partitions move to the second.
    await first.stop(10_000);
    const deadline = Date.now() + 120_000;
    for (;;) {
      const { committed, end } = await committedAndEndOffsets(s.kafka, config.kafka.groupId, s.topics.input);
      if (JSON.stringify(committed) === JSON.stringify(end)) break;
      if (Date.now() > deadline) throw new Error('the group did not reach the end of the input');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await second.stop(10_000);

    const results = await matchResults(s);
    expect(new Set(results.map((r) => r.partnerId))).toEqual(new Set(s.partners.map((p) => p.partnerId)));
    expect(results.every((r) => r.outcome !== 'FAILED')).toBe(true);
    expect(stats().bulkTasks).toBe(s.partners.length);
    expect(stats().quotaConsumed).toBe(s.partners.length);
    // The compacted state topic's newest value per key: a tombstone for every ledger entry.
    const latest = new Map<string, Buffer | null>();
    for (const message of await readAll(s.kafka, s.topics.state))
      latest.set(message.key?.toString() ?? '', message.value);
    expect(latest.size).toBeGreaterThan(0);
    expect([...latest].filter(([, value]) => value !== null).map(([key]) => key)).toEqual([]);
  });
});
