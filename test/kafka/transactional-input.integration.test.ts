// Input written in transactions, as an upstream exactly-once producer (Kafka Streams, Flink, a
// transactional kafkajs or Java producer) writes it: each transaction ends with a marker that
// takes an offset and carries no record.
import { afterAll, describe, expect, it } from 'vitest';
import { createKafkaEnrichment } from '../../src/cli/enrichment.ts';
import { RunSummary } from '../../src/pipeline/run-summary.ts';
import { startSandbox } from '../../src/sandbox/index.ts';
import {
  committedAtEnd,
  createTopicsFor,
  jsonPartnerMessages,
  readAll,
  testConfig,
  testTopics,
  waitForFinished,
} from '../support/enrichment.ts';
import { eventually, kafkaClient, uniqueName } from '../support/kafka.ts';
import { deleteSubject } from '../support/schema-registry.ts';

const SEED = 13;

describe('partner-enrich run on input written in transactions', () => {
  const kafka = kafkaClient();
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  const partners = jsonPartnerMessages(30, SEED);
  const [first, aborted, last] = [partners.slice(0, 10), partners.slice(10, 20), partners.slice(20)];

  it.each(['at-least-once', 'exactly-once'] as const)(
    'regression (%s): the committed position stopped on the last transaction marker, one short of every partition end for good (a lag of 1 to any tool); now it reaches the end offsets, and aborted records are not enriched',
    async (delivery) => {
      const sandbox = await startSandbox({ port: 0, orgs: 1_000, seed: SEED });
      const topics = testTopics(`txn-input-${delivery}`);
      const dropTopics = await createTopicsFor(kafka, topics);
      cleanups.push(
        dropTopics,
        () => sandbox.close(),
        async () => {
          for (const t of [topics.matches, topics.events, topics.storage]) await deleteSubject(`${t}-value`);
        },
      );
      const upstream = kafka.producer({
        transactionalId: uniqueName('upstream'),
        idempotent: true,
        maxInFlightRequests: 1,
      });
      await upstream.connect();
      cleanups.push(() => upstream.disconnect());
      const write = async (slice: typeof partners, outcome: 'commit' | 'abort') => {
        const transaction = await upstream.transaction();
        await transaction.send({ topic: topics.input, acks: -1, messages: [...slice] });
        await (outcome === 'commit' ? transaction.commit() : transaction.abort());
      };
      await write(first, 'commit');
      await write(aborted, 'abort');
      await write(last, 'commit');
      const config = testConfig(sandbox.url, topics, { inputFormat: 'json', delivery });
      const atEnd = () => committedAtEnd(kafka, config.kafka.groupId, topics.input);
      const summary = new RunSummary();
      const enrichment = await createKafkaEnrichment(config, summary);
      await enrichment.pipeline.start();
      try {
        await waitForFinished(() => summary.finished, first.length + last.length, 60_000);
        // Committed while running (at-least-once: every interval; exactly-once: a transaction
        // of offsets alone), not only at close: a marker that ends a fetched batch.
        await eventually(atEnd, 20_000, 'the committed positions at the end offsets');
        // An aborted transaction fetched alone (its records and marker, nothing for the pipeline).
        await write(aborted, 'abort');
        await eventually(atEnd, 20_000, 'the committed positions past the aborted transaction');
      } finally {
        await enrichment.stop(10_000);
      }
      const enriched = (await readAll(kafka, topics.matches)).map((m) => m.key?.toString()).sort();
      expect(enriched).toEqual([...first, ...last].map((p) => p.key).sort());
      expect(sandbox.state.stats.snapshot().bulkTasks).toBe(first.length + last.length);
    },
  );
});
