import { afterAll, describe, expect, it } from 'vitest';
import { createKafkaEnrichment } from '../../src/cli/enrichment.ts';
import { RunSummary } from '../../src/pipeline/run-summary.ts';
import { startSandbox } from '../../src/sandbox/index.ts';
import {
  committedAndEndOffsets,
  createTopicsFor,
  jsonPartnerMessages,
  produce,
  readAll,
  testConfig,
  testTopics,
  waitForFinished,
} from '../support/enrichment.ts';
import { kafkaClient, setTopicConfig } from '../support/kafka.ts';
import { deleteSubject } from '../support/schema-registry.ts';

const SEED = 11;
const PARTNERS = 200;

describe('partner-enrich run on Kafka with compressed topics', () => {
  const kafka = kafkaClient();
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  const partners = jsonPartnerMessages(PARTNERS, SEED);

  it.each(['lz4', 'snappy', 'zstd'])(
    'regression: a topic whose batches the broker keeps %s-compressed crashed `run` at its first fetch ("compression not implemented", exit 1 on every restart); now its records are enriched, and a restart restores the partners from the compressed storage topic',
    async (codec) => {
      const sandbox = await startSandbox({ port: 0, orgs: 1_000, seed: SEED });
      const topics = testTopics(`compressed-${codec}`);
      const dropTopics = await createTopicsFor(kafka, topics);
      cleanups.push(
        dropTopics,
        () => sandbox.close(),
        async () => {
          for (const t of [topics.matches, topics.events, topics.storage]) await deleteSubject(`${t}-value`);
        },
      );
      // The topic's compression.type: the broker recompresses whatever a producer sends, so every
      // batch the pipeline fetches from these topics (input, storage at restore, state) is in it.
      for (const topic of [topics.input, topics.storage, topics.state])
        await setTopicConfig(kafka, topic, 'compression.type', codec);
      const config = testConfig(sandbox.url, topics, { inputFormat: 'json' });

      const runOnce = async (): Promise<RunSummary> => {
        await produce(kafka, topics.input, partners);
        const summary = new RunSummary();
        const enrichment = await createKafkaEnrichment(config, summary);
        await enrichment.pipeline.start();
        try {
          await waitForFinished(() => summary.finished, PARTNERS, 60_000);
        } finally {
          await enrichment.stop(10_000);
        }
        return summary;
      };

      const first = await runOnce();
      expect(await readAll(kafka, topics.matches)).toHaveLength(PARTNERS);
      expect(first.reused).toBe(0);

      // The same records again, read by a new pipeline: it knows them from the storage topic.
      const second = await runOnce();
      expect(second.reused).toBe(PARTNERS);
      expect(sandbox.state.stats.snapshot().bulkTasks).toBe(PARTNERS);
      expect(await readAll(kafka, topics.deadLetters)).toHaveLength(0);
      const { committed, end } = await committedAndEndOffsets(kafka, config.kafka.groupId, topics.input);
      expect(committed).toEqual(end);
    },
  );
});
