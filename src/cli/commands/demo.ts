import { randomBytes } from 'node:crypto';
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { countRecords } from '../../files/ndjson-source.ts';
import { RunSummary } from '../../pipeline/run-summary.ts';
import { createFileEnrichment, inputFile } from '../enrichment.ts';
import { wholeNumber } from '../option-parsers.ts';
import { MAX_SANDBOX_ORGS } from '../../sandbox/defaults.ts';
import { commandConfig } from '../options.ts';
import { summaryTable } from '../summary-table.ts';

interface DemoOptions {
  input?: string;
  outputDir?: string;
  orgs: number;
  seed: number;
  progress: boolean;
}

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description(
      'the embedded default: starts the sandbox reference data service in-process and enriches an NDJSON file ' +
        'through the same pipeline core as `run`, writing matches, events, storage and dead letters as NDJSON',
    )
    .option(
      '--input <file>',
      'NDJSON PartnerRecords (default: files.input, else the examples/partners.ndjson that comes with partner-enrich); ' +
        'a line over files.maxRecordBytes (1 MiB) is dead-lettered FILE_RECORD_TOO_LARGE with its first 1 KiB',
    )
    .option('--output-dir <dir>', 'where the output files go (default: files.outputDir, out/)')
    .option(
      '--orgs <n>',
      'organizations in the sandbox dataset',
      wholeNumber('--orgs', 1, MAX_SANDBOX_ORGS),
      20_000,
    )
    .option(
      '--seed <n>',
      'seed of the sandbox dataset (examples/partners.ndjson is made from seed 42)',
      wholeNumber('--seed', 0),
      42,
    )
    .option('--no-progress', 'no progress bar')
    .action(async (options: DemoOptions, command: Command) => {
      // Ctrl-C or SIGTERM: the records in flight are finished (within shutdown.graceMs), and how
      // many records the outputs hold is said (stoppedMessage). A second signal ends the process
      // at once (Node's default, the handlers being gone).
      const interrupted = Promise.withResolvers<NodeJS.Signals>();
      const onSignal = (signal: NodeJS.Signals) => interrupted.resolve(signal);
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      // Imported here, not at the top: main.ts registers every command, and `run` must not load the sandbox.
      const { startSandbox } = await import('../../sandbox/index.ts');
      const apiKey = randomBytes(16).toString('hex');
      const sandbox = await startSandbox({
        port: 0,
        apiKey,
        orgs: options.orgs,
        seed: options.seed,
      });
      try {
        const config = commandConfig(command, {
          source: 'file',
          files: {
            ...(options.input ? { input: options.input } : {}),
            ...(options.outputDir ? { outputDir: options.outputDir } : {}),
          },
          refdata: { baseUrl: sandbox.url, auth: 'apiKey', apiKey },
        });
        const input = inputFile(config.files);
        const total = await countRecords(input, config.files.maxRecordBytes);
        const summary = new RunSummary();
        const enrichment = await createFileEnrichment(config, summary);
        const bar = options.progress
          ? new cliProgress.SingleBar(
              {
                format: 'enriching [{bar}] {percentage}% | {value}/{total} records | {rate} records/s',
                hideCursor: true,
              },
              cliProgress.Presets.shades_classic,
            )
          : undefined;
        const showProgress = () => {
          // A pipe's records are not counted ahead (total undefined): the bar's total follows the records read.
          if (total === undefined) bar?.setTotal(summary.recordsIn);
          bar?.update(summary.finished, { rate: Math.round(summary.finished / summary.elapsedSeconds()) });
        };
        bar?.start(total ?? 0, 0, { rate: 0 });
        const ticker = setInterval(showProgress, 200);
        let signal: NodeJS.Signals | undefined;
        try {
          await enrichment.pipeline.start();
          // Whichever comes first: the file done, a failure (which leaves the pipeline never idle:
          // the process printed the error and hung), or a signal. What comes later is let go.
          const ended = Promise.withResolvers<NodeJS.Signals | undefined>();
          void (async () => {
            await enrichment.source.drained;
            await enrichment.pipeline.idle();
          })().then(() => ended.resolve(undefined), ended.reject);
          void enrichment.pipeline.failed.then(() => ended.resolve(undefined));
          void interrupted.promise.then(ended.resolve);
          signal = await ended.promise;
        } finally {
          clearInterval(ticker);
          showProgress();
          bar?.stop();
          await enrichment.stop(config.shutdown.graceMs);
        }
        if (enrichment.pipeline.failure) throw enrichment.pipeline.failure;
        console.log(summaryTable(summary, { input, outputDir: config.files.outputDir }));
        if (signal) {
          console.error(`partner-enrich: ${stoppedMessage(signal, summary, total, config.files.outputDir)}`);
          process.exitCode = 128 + (signal === 'SIGINT' ? 2 : 15);
        }
      } finally {
        await sandbox.close();
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
}

/**
 * What a stopped demo left: the records read (of the file's, when counted ahead) and those the
 * outputs hold, counted as their writes completed. Records still in flight when the grace ran
 * out have no output: a run again does them.
 */
function stoppedMessage(
  signal: NodeJS.Signals,
  summary: RunSummary,
  total: number | undefined,
  outputDir: string,
): string {
  const read = `${summary.recordsIn}${total === undefined ? '' : ` of ${total}`} records read`;
  const held = summary.finished;
  const outputs = `the outputs in ${outputDir}/`;
  return total !== undefined && held >= total
    ? `stopped by ${signal} after ${read}: ${outputs} hold all ${held} and are complete`
    : `stopped by ${signal} after ${read}: ${outputs} hold ${held} of them and are partial; ` +
        'run again for the records not in them';
}
