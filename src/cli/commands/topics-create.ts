import type { Command } from 'commander';
import { createPipelineTopics } from '../../kafka/topics.ts';
import { reachableKafka } from '../enrichment.ts';
import { commandConfig } from '../options.ts';

export function registerTopicsCreate(program: Command): void {
  const topics =
    program.commands.find((c) => c.name() === 'topics') ??
    program.command('topics').description('Kafka topics');
  topics
    .command('create')
    .description(
      'create the input, output, storage (compacted), dead-letter and state (compacted) topics that are missing, ' +
        'with topics.partitions partitions; a storage or input topic created beside the other one, which exists, ' +
        'takes its partition count (the pipeline needs both equal). Existing topics are checked, not changed: a storage ' +
        'topic with another partition count than the input, or a storage or state topic not compacted, exits 2 ' +
        '(TOPIC_MISCONFIGURED) before anything is created',
    )
    .action(async (_options, command: Command) => {
      const config = commandConfig(command, {}, true);
      const admin = (await reachableKafka(config)).admin();
      await admin.connect();
      try {
        const { created, notes } = await createPipelineTopics(admin, config.topics, config.topics);
        console.log(created.length === 0 ? 'all topics exist' : `created: ${created.join(', ')}`);
        for (const note of notes) console.log(note);
      } finally {
        await admin.disconnect();
      }
    });
}
