import { Option, type Command } from 'commander';
import type { KafkaMessage } from 'kafkajs';
import { readTopicToEnd } from '../../kafka/topic-reader.ts';
import { FAILURE_STAGES, VALUE_DROPPED_HEADER } from '../../pipeline/outputs.ts';
import { reachableKafka } from '../enrichment.ts';
import { isoTime } from '../option-parsers.ts';
import { commandConfig } from '../options.ts';

interface ReplayOptions {
  stage?: string;
  code?: string;
  partner?: string;
  /** Epoch ms. */
  since?: number;
  dryRun?: boolean;
}

const header = (message: KafkaMessage, name: string): string | undefined =>
  message.headers?.[name]?.toString();

/** Which dead letters a replay takes: every given filter must hold, and the original bytes must be there. */
export function deadLetterFilter(options: ReplayOptions): (message: KafkaMessage) => boolean {
  const { since } = options;
  return (message) =>
    header(message, VALUE_DROPPED_HEADER) === undefined &&
    (options.stage === undefined || header(message, 'pe.stage') === options.stage) &&
    (options.code === undefined || header(message, 'pe.error.code') === options.code) &&
    (options.partner === undefined || message.key?.toString() === options.partner) &&
    (since === undefined || Date.parse(header(message, 'pe.failed-at') ?? '') >= since);
}

export function registerDlqReplay(program: Command): void {
  const dlq =
    program.commands.find((c) => c.name() === 'dlq') ?? program.command('dlq').description('dead letters');
  dlq
    .command('replay')
    .description(
      're-publish dead letters (original key and bytes) to the input topic, e.g. after fixing the mapping or the data; ' +
        'the dead-letter topic is left as it is; dead letters whose bytes were too large to keep (pe.value-dropped) are left out',
    )
    .addOption(new Option('--stage <stage>', 'only dead letters of this stage').choices(FAILURE_STAGES))
    .option('--code <code>', 'only dead letters with this error code, e.g. TASK_FAILED')
    .option('--partner <id>', 'only dead letters with this key (partner id)')
    .option(
      '--since <time>',
      'only dead letters that failed at or after this ISO 8601 time',
      isoTime('--since'),
    )
    .option('--dry-run', 'count what would be replayed, by stage and code, without publishing')
    .action(async (options: ReplayOptions, command: Command) => {
      const config = commandConfig(command, {}, true);
      const kafka = await reachableKafka(config.kafka);
      const take = deadLetterFilter(options);
      const chosen: KafkaMessage[] = [];
      const seen = await readTopicToEnd(kafka, config.topics.deadLetters, (message) => {
        if (take(message)) chosen.push(message);
      });
      const byReason = new Map<string, number>();
      for (const m of chosen) {
        const reason = `${header(m, 'pe.stage')}/${header(m, 'pe.error.code')}`;
        byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
      }
      console.log(`${chosen.length} of ${seen} dead letters match`);
      for (const [reason, count] of byReason) console.log(`  ${reason}: ${count}`);
      if (options.dryRun || chosen.length === 0) return;
      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      try {
        await producer.send({
          topic: config.topics.input,
          acks: -1,
          messages: chosen.map((m) => ({
            key: m.key,
            value: m.value,
            headers: {
              'pe.replayed-from': `${config.topics.deadLetters}:${header(m, 'pe.origin.partition')}:${header(m, 'pe.origin.offset')}`,
            },
          })),
        });
      } finally {
        await producer.disconnect();
      }
      console.log(`replayed ${chosen.length} records to ${config.topics.input}`);
    });
}
