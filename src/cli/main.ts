#!/usr/bin/env node
// partner-enrich: the command line. Each command lives in commands/; this file only
// declares them, so that `--help` on the program and on every command stays complete.
import { Command } from 'commander';
import { registerConfigCheck } from './commands/config-check.ts';
import { registerDemo } from './commands/demo.ts';
import { registerDlqReplay } from './commands/dlq-replay.ts';
import { registerRerun } from './commands/rerun.ts';
import { registerRun } from './commands/run.ts';
import { registerSandbox } from './commands/sandbox.ts';
import { registerStorageInitialize } from './commands/storage-initialize.ts';
import { registerTopicsCreate } from './commands/topics-create.ts';
import { reportFailure } from './failure.ts';

const program = new Command('partner-enrich')
  .description(
    'Enriches business-partner records in bulk against a reference data service: Kafka (or NDJSON files) in, ' +
      'bulk lookups under the quota, match results, lifecycle events, storage and dead letters out.',
  )
  .option('-c, --config <file>', 'configuration file (JSON or YAML); also $PARTNER_ENRICH_CONFIG')
  .showHelpAfterError();

registerRun(program);
registerDemo(program);
registerDlqReplay(program);
registerTopicsCreate(program);
registerConfigCheck(program);
registerStorageInitialize(program);
registerRerun(program);
registerSandbox(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.exitCode = reportFailure(error);
}
