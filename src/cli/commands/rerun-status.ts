// `rerun status` and `rerun list`: jobs as the state topic holds them, from any machine.
import type { Command } from 'commander';
import { inRunOrder } from '../../rerun/job-order.ts';
import { wholeNumber } from '../option-parsers.ts';
import { commandConfig } from '../options.ts';
import { withRerunContext } from '../rerun-context.ts';
import { followRerun, RERUN_EXIT_CODES, reportFollowed } from '../rerun-follow.ts';
import { describeRerun, rerunTable } from '../rerun-report.ts';

interface StatusFlags {
  follow?: boolean;
  timeout?: number;
  json?: boolean;
}

export function registerRerunStatus(rerun: Command): void {
  rerun
    .command('status')
    .description(
      'show a rerun: status, progress, counts, the change report, times and message. With --follow, follows ' +
        `it until it ends and exits 0 when FINISHED, ${RERUN_EXIT_CODES.notFinished} when DIED or CANCELED, ` +
        `${RERUN_EXIT_CODES.stillRunning} when still running after --timeout`,
    )
    .argument('<id>', 'the job id')
    .option(
      '--follow',
      'follow the job until it ends (a progress bar on a terminal, a log line per change otherwise)',
    )
    .option(
      '--timeout <seconds>',
      'with --follow: stop following after this long (default rerun.waitTimeoutMs, 0: none)',
      wholeNumber('--timeout', 0),
    )
    .option('--json', 'print the job and its derived view as JSON')
    .action(async (id: string, flags: StatusFlags, command: Command) => {
      // Taken for a follow's bound, it was ignored without --follow: a script waiting on the exit
      // code got 0 for a job that had not run.
      if (flags.timeout !== undefined && !flags.follow)
        command.error('error: --timeout applies only with --follow');
      const config = commandConfig(command, {}, true);
      await withRerunContext(config, async (context) => {
        if (flags.follow) {
          const timeoutMs = flags.timeout === undefined ? config.rerun.waitTimeoutMs : flags.timeout * 1_000;
          reportFollowed(await followRerun(context, id, timeoutMs), flags.json ?? false);
          return;
        }
        const view = await context.view(context.existing(id));
        console.log(flags.json ? JSON.stringify(view, null, 2) : describeRerun(view));
      });
    });

  rerun
    .command('list')
    .description(
      'list the reruns that have not ended, in the order they run (--all: every job in the state topic)',
    )
    .option('--all', 'include the jobs that ended (FINISHED, DIED, CANCELED)')
    .option('--json', 'print the jobs and their derived views as a JSON array')
    .action(async (flags: { all?: boolean; json?: boolean }, command: Command) => {
      const config = commandConfig(command, {}, true);
      await withRerunContext(config, async (context) => {
        const now = Date.now();
        const views = await Promise.all(inRunOrder(context.store).map((job) => context.view(job, now)));
        const shown = flags.all ? views : views.filter((v) => !v.ended);
        if (flags.json) console.log(JSON.stringify(shown, null, 2));
        else if (shown.length === 0)
          console.log(flags.all ? 'no reruns' : 'no reruns that have not ended (--all lists every job)');
        else console.log(rerunTable(shown));
      });
    });
}
