// At-least-once delivery repeats no output it can tell was written: `partner-enrich run`
// killed with SIGKILL while outputs it wrote were not committed yet, then started again. The
// records read again find their partner's stored state naming them (restored from the
// storage topic, which got it with their outputs) and are finished without writing twice.
import type { Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { cliEnv } from '../support/cli.ts';
import { kafkaClient } from '../support/kafka.ts';
import {
  committedRecords,
  eachRecordOnce,
  killHard,
  outputsOnceDrained,
  recordsIn,
  sandboxWithPartners,
  startCollected,
  topicsWithPartners,
  waitFor,
} from '../support/run-process.ts';
import { schemaRegistry } from '../support/schema-registry.ts';

const SEED = 17;
const PARTNERS = 6_000;
/** Outputs written and not yet committed when the process is killed: what used to be written twice. */
const UNCOMMITTED_AT_KILL = 100;

describe('at-least-once: records read again after a kill', () => {
  const kafka: Kafka = kafkaClient();
  const registry = schemaRegistry();
  const scene = sandboxWithPartners(PARTNERS, SEED);

  it('regression: outputs written before a kill -9 and not committed are not written again after the restart', async () => {
    const run = await topicsWithPartners(kafka, registry, 'redelivery', scene.partners);
    scene.cleanups.push(run.cleanup);
    const start = () => {
      const running = startCollected(['run'], {
        ...cliEnv(scene.sandbox.url, run.topics, run.groupId),
        PARTNER_ENRICH_OBSERVABILITY__LOG_LEVEL: 'info',
      });
      scene.children.push(running);
      return running;
    };
    const written = () => recordsIn(kafka, run.topics.matches);
    const uncommitted = async () =>
      (await written()) - (await committedRecords(kafka, run.topics.input, run.groupId));

    const first = start();
    await waitFor(
      async () => (await uncommitted()) >= UNCOMMITTED_AT_KILL && (await written()) < PARTNERS / 2,
      120_000,
      () => `${UNCOMMITTED_AT_KILL} MatchResults written and not committed:\n${first.logs().slice(-3000)}`,
    );
    await killHard(first);
    // What makes the scenario: outputs that are durable while their positions are not committed.
    expect(await uncommitted()).toBeGreaterThanOrEqual(UNCOMMITTED_AT_KILL);

    const second = start();
    const outcome = await outputsOnceDrained(kafka, registry, run, PARTNERS, () => second.logs());
    expect(outcome).toEqual(eachRecordOnce(PARTNERS));
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 240_000);
});
