// `partner-enrich run` stopped after the service answered (a bulk created, a quota consume) and
// before the state topic acknowledged the ledger's record of it: killed with SIGKILL, or ended
// by the refused write itself. Then started again on the same state.dir, as a container
// restarted in its pod, or without one on the same machine.
//
// What holds the record back is the broker, not a hook: the sandbox is frozen while the
// request waits in it (the submission's intent already in the state topic), the state topic
// is then set to take no message of more than 100 bytes (every ledger write is refused as
// too large), and the service is let go. The limit is put back before the restart.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { cliEnv } from '../support/cli.ts';
import { kafkaClient, setTopicConfig } from '../support/kafka.ts';
import {
  eachRecordOnce,
  killHard,
  outputsOnceDrained,
  sandboxWithPartners,
  startCollected,
  topicsWithPartners,
  waitFor,
} from '../support/run-process.ts';
import { schemaRegistry } from '../support/schema-registry.ts';

const PARTNERS = 40;
const BROKER_DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;

describe('the bulk ledger journal: kill -9 between the service answer and its record', () => {
  const kafka: Kafka = kafkaClient();
  const registry = schemaRegistry();
  const scene = sandboxWithPartners(PARTNERS, 31);

  it.each([
    ['a bulk created: its tasks were looked up again', 'on the same state.dir', 'createBulkLookup', true],
    [
      'a quota consume answered: its units were consumed again',
      'on the same state.dir',
      'consumeQuota',
      true,
    ],
    // Without state.dir: the process ends by itself on the refused write (STATE_WRITE_FAILED,
    // exit 1), and its private directory, which it removed at exit, journal and all, is now
    // left to the restart on the same machine; a start of another pipeline meanwhile removed
    // it (CI at stop 47), now it leaves it.
    [
      'a quota consume answered: its units were consumed again',
      'without state.dir, another pipeline started meanwhile',
      'consumeQuota',
      false,
    ],
  ] as const)(
    'regression: after %s by the restart %s',
    async (_what, _where, operation, onStateDir) => {
      const quota = operation === 'consumeQuota';
      scene.sandbox.state.faults.reset();
      const run = await topicsWithPartners(kafka, registry, 'ledger-journal', scene.partners);
      scene.cleanups.push(run.cleanup);
      const stateDir = mkdtempSync(join(tmpdir(), 'ledger-journal-'));
      const start = () => {
        const running = startCollected(['run'], {
          ...cliEnv(scene.sandbox.url, run.topics, run.groupId),
          ...(onStateDir ? { PARTNER_ENRICH_STATE__DIR: stateDir } : {}),
          PARTNER_ENRICH_QUOTA__ENABLED: String(quota),
          // Every record in one bulk: all of them are in the window.
          PARTNER_ENRICH_BATCHING__LINGER_MS: '1000',
          PARTNER_ENRICH_OBSERVABILITY__LOG_LEVEL: 'info',
          // The restart's partitions come once the killed member's session has run out.
          PARTNER_ENRICH_KAFKA__SESSION_TIMEOUT_MS: '6000',
        });
        scene.children.push(running);
        return running;
      };
      const stats = () => scene.sandbox.state.stats.snapshot();
      const before = stats();

      scene.sandbox.state.faults.update({ frozen: true });
      const first = start();
      await waitFor(
        async () =>
          (stats().requestsByOperation[operation] ?? 0) > (before.requestsByOperation[operation] ?? 0),
        60_000,
        () => `the ${operation} request waiting in the sandbox:\n${first.logs().slice(-3000)}`,
      );
      await setTopicConfig(kafka, run.topics.state, 'max.message.bytes', '100');
      scene.sandbox.state.faults.update({ frozen: false });
      const answered = () =>
        quota ? stats().quotaConsumed - before.quotaConsumed : stats().bulkTasks - before.bulkTasks;
      await waitFor(
        async () => answered() > 0,
        30_000,
        () => `the ${operation} answered`,
      );
      if (quota) {
        // The paid intent refused for good: the process ends by itself.
        expect(await first.exited).toBe(1);
        expect(first.logs()).toContain('STATE_WRITE_FAILED');
      } else {
        // The bulk's record is refused and tried again: the kill lands meanwhile.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        await killHard(first);
      }
      await setTopicConfig(
        kafka,
        run.topics.state,
        'max.message.bytes',
        String(BROKER_DEFAULT_MAX_MESSAGE_BYTES),
      );

      if (!onStateDir) {
        // Another pipeline started on the machine meanwhile reaps the dead private directory,
        // whose journal is not its own: it stays for this pipeline's restart.
        const other = await topicsWithPartners(kafka, registry, 'ledger-journal-other', []);
        scene.cleanups.push(other.cleanup);
        const neighbour = startCollected(['run'], cliEnv(scene.sandbox.url, other.topics, other.groupId));
        scene.children.push(neighbour);
        await waitFor(
          async () => neighbour.logs().includes('partitions assigned'),
          60_000,
          () => `the other pipeline's start:\n${neighbour.logs().slice(-3000)}`,
        );
        neighbour.child.kill('SIGTERM');
        expect(await neighbour.exited).toBe(0);
      }

      const second = start();
      const counts = await outputsOnceDrained(kafka, registry, run, PARTNERS, second.logs);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);

      expect(counts).toEqual(eachRecordOnce(PARTNERS));
      expect(stats().bulkTasks - before.bulkTasks).toBe(PARTNERS);
      if (quota) expect(stats().quotaConsumed - before.quotaConsumed).toBe(PARTNERS);
      expect(second.logs()).toContain('bulk ledger journal');
    },
    240_000,
  );
});
