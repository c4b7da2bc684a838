// At-least-once delivery reads again what was not committed, records whose lookup failed for
// good too: `partner-enrich run` killed with SIGKILL while the FAILED MatchResults and dead
// letters it wrote were not committed yet, then started again. A record read again whose
// failure was written is finished as a redelivery, on the same disk (the partition's file
// remembers the record) as on a fresh one (the failure's storage record names it): one FAILED
// MatchResult and one dead letter per record, and no lookup made again.
//
// Every lookup fails: the sandbox answers each task FAILED and one attempt is the budget. Small
// bulks and a slow service spread the failures over some seconds, so that the kill finds
// failures written within the last commit interval.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../deploy/local/processes.ts';
import { toJsonRecord } from '../../src/mapping/lookup-task.ts';
import { bulkAuditEntry, contentKey } from '../../src/sandbox/state/bulk-audit.ts';
import { cliEnv } from '../support/cli.ts';
import { readAll } from '../support/enrichment.ts';
import { kafkaClient } from '../support/kafka.ts';
import {
  committedRecords,
  killHard,
  metricsCounter,
  recordsIn,
  sandboxWithPartners,
  startCollected,
  topicsWithPartners,
  waitFor,
} from '../support/run-process.ts';
import { schemaRegistry } from '../support/schema-registry.ts';

const SEED = 29;
const PARTNERS = 4_000;
/** Failures written and not yet committed when the process is killed: what used to be written twice. */
const UNCOMMITTED_AT_KILL = 100;
/** Tasks per bulk (batching.maxTasks). */
const BULK_TASKS = 50;
/** batching.maxConcurrentBulks: a kill finds at most this many bulks in a window the API leaves open. */
const CONCURRENT_BULKS = 4;

describe('at-least-once: records whose lookup failed for good, read again after a kill', () => {
  const kafka: Kafka = kafkaClient();
  const registry = schemaRegistry();
  const scene = sandboxWithPartners(PARTNERS, SEED);

  it.each([
    ['the same disk (the partition files kept)', true],
    ['a fresh disk (restored from the storage topic)', false],
  ])(
    'regression: lookups failed for good before a kill -9 and not committed were looked up again and their FAILED MatchResults and dead letters written twice on %s',
    async (_disk, sameDisk) => {
      scene.sandbox.state.faults.reset();
      scene.sandbox.state.faults.update({ taskFailureRate: 1, latencyMs: 100 });
      const run = await topicsWithPartners(kafka, registry, 'failed-redelivery', scene.partners);
      scene.cleanups.push(run.cleanup);
      const stateDir = mkdtempSync(join(tmpdir(), 'failed-redelivery-'));
      const metricsPort = await freePort();
      const start = () => {
        const running = startCollected(['run'], {
          ...cliEnv(scene.sandbox.url, run.topics, run.groupId),
          PARTNER_ENRICH_RETRY__MAX_ATTEMPTS: '1',
          PARTNER_ENRICH_BATCHING__MAX_TASKS: String(BULK_TASKS),
          PARTNER_ENRICH_BATCHING__MAX_CONCURRENT_BULKS: String(CONCURRENT_BULKS),
          // Unset, every start gets an empty private directory of its own.
          ...(sameDisk ? { PARTNER_ENRICH_STATE__DIR: stateDir } : {}),
          PARTNER_ENRICH_OBSERVABILITY__LOG_LEVEL: 'info',
          PARTNER_ENRICH_OBSERVABILITY__METRICS_PORT: String(metricsPort),
        });
        scene.children.push(running);
        return running;
      };
      const written = () => recordsIn(kafka, run.topics.matches);
      const committed = () => committedRecords(kafka, run.topics.input, run.groupId);
      const tasksPaid = () => scene.sandbox.state.stats.snapshot().bulkTasks;
      const quotaPaid = () => scene.sandbox.state.stats.snapshot().quotaConsumed;
      const partnerOfContent = new Map(scene.partners.map((p) => [contentKey(toJsonRecord(p)), p.partnerId]));
      const bulks = () => [...scene.sandbox.state.bulks.all()];
      const decodedMatches = async () =>
        Promise.all(
          (await readAll(kafka, run.topics.matches)).map(
            async (m) => (await registry.decode(m.value as Buffer)) as { partnerId: string; outcome: string },
          ),
        );
      const [paidBefore, quotaBefore] = [tasksPaid(), quotaPaid()];

      const first = start();
      await waitFor(
        async () =>
          (await written()) - (await committed()) >= UNCOMMITTED_AT_KILL && (await written()) < PARTNERS / 2,
        120_000,
        () => `${UNCOMMITTED_AT_KILL} failures written and not committed:\n${first.logs().slice(-3000)}`,
      );
      await killHard(first);
      // What makes the scenario: failures that are durable while their positions are not committed.
      expect((await written()) - (await committed())).toBeGreaterThanOrEqual(UNCOMMITTED_AT_KILL);
      const failedBeforeKill = new Set((await decodedMatches()).map((m) => m.partnerId));
      const bulksBeforeKill = new Set(bulks().map((bulk) => bulk.id));

      const second = start();
      await waitFor(
        async () => (await committed()) >= PARTNERS,
        150_000,
        () => `every position committed:\n${second.logs().slice(-3000)}`,
      );
      const redelivered = await metricsCounter(metricsPort, 'records_redelivered_total');
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);

      const matches = await decodedMatches();
      const deadLetters = (await readAll(kafka, run.topics.deadLetters)).map(
        (m) =>
          `${m.headers?.['pe.origin.partition']?.toString()}@${m.headers?.['pe.origin.offset']?.toString()}`,
      );
      expect({
        matches: matches.length,
        failed: matches.filter((m) => m.outcome === 'FAILED').length,
        partners: new Set(matches.map((m) => m.partnerId)).size,
        deadLetters: deadLetters.length,
        inputRecordsDeadLettered: new Set(deadLetters).size,
      }).toEqual({
        matches: PARTNERS,
        failed: PARTNERS,
        partners: PARTNERS,
        deadLetters: PARTNERS,
        inputRecordsDeadLettered: PARTNERS,
      });
      expect(redelivered).toBeGreaterThanOrEqual(UNCOMMITTED_AT_KILL);
      // The defect: records whose failure was written before the kill were looked up again.
      const lookedUpAfterKill = bulks()
        .filter((bulk) => !bulksBeforeKill.has(bulk.id))
        .flatMap((bulk) => bulkAuditEntry(bulk).tasks.map((task) => partnerOfContent.get(task.contentKey)));
      expect(lookedUpAfterKill.filter((partnerId) => failedBeforeKill.has(partnerId as string))).toEqual([]);
      // What may still be paid twice are records that had no output before the kill, in the
      // windows the API leaves open (between a bulk's creation and its ledger record, between a
      // quota consume and the intent's record of it: docs/GUARANTEES.md, What remains), at most
      // the bulks under way at the kill; CI saw one and two.
      expect(tasksPaid() - paidBefore - PARTNERS).toBeLessThanOrEqual(CONCURRENT_BULKS * BULK_TASKS);
      expect(quotaPaid() - quotaBefore - PARTNERS).toBeLessThanOrEqual(CONCURRENT_BULKS * BULK_TASKS);
    },
    300_000,
  );
});
