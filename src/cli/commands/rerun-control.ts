// `rerun pause|resume|cancel|throttle`: the job is written again with the new request, in the
// same one step as a start (KafkaRerunJobStore.updateJob); the executors follow the state
// topic and act on it at their next chunk.
import type { Command } from 'commander';
import { RerunError } from '../../rerun/errors.ts';
import type { RerunControl, RerunJob } from '../../rerun/rerun-job.ts';
import { reportFailure } from '../failure.ts';
import { share } from '../option-parsers.ts';
import { commandConfig } from '../options.ts';
import { withRerunContext } from '../rerun-context.ts';
import { RERUN_EXIT_CODES } from '../rerun-follow.ts';
import { progressLine } from '../rerun-report.ts';

/**
 * Rewrites the job with `change` unless it ended (exit RERUN_EXIT_CODES.ended then), decided
 * on the job as read within the write's fence: a control or progress written since the
 * command read the job is decided on, never written over.
 */
async function rewrite(
  command: Command,
  id: string,
  what: string,
  change: (job: RerunJob) => RerunJob,
): Promise<void> {
  const config = commandConfig(command, {}, true);
  await withRerunContext(config, async (context) => {
    try {
      const changed = await context.store.updateJob(context.existing(id), async (job) => {
        const view = await context.view(job);
        if (view.ended)
          throw new RerunError('RERUN_ENDED', `rerun ${id} ${view.status}; there is nothing to ${what}`, {
            details: { jobId: id, status: view.status },
          });
        return { ...change(job), controlAt: Date.now() };
      });
      console.log(progressLine(await context.view(changed), false));
    } catch (error) {
      if (!(error instanceof RerunError && error.code === 'RERUN_ENDED')) throw error;
      reportFailure(error);
      process.exitCode = RERUN_EXIT_CODES.ended;
    }
  });
}

const CONTROLS: [name: string, control: RerunControl, description: string][] = [
  ['pause', 'pause', 'pause a rerun: its executors stop after their current chunk and keep their place'],
  ['resume', 'run', 'resume a paused rerun from where each partition stopped'],
  ['cancel', 'cancel', 'cancel a rerun: it ends CANCELED; what it wrote so far stays'],
];

export function registerRerunControl(rerun: Command): void {
  for (const [name, control, description] of CONTROLS) {
    rerun
      .command(name)
      .description(`${description}. Exits ${RERUN_EXIT_CODES.ended} when the job has ended`)
      .argument('<id>', 'the job id')
      .action(async (id: string, _flags: unknown, command: Command) => {
        await rewrite(command, id, name, (job) => ({ ...job, control }));
      });
  }
  rerun
    .command('throttle')
    .description(
      'change the share of each quota window a running (or paused, or waiting) rerun may take; it applies from ' +
        `the rerun's next quota request on. Exits ${RERUN_EXIT_CODES.ended} when the job has ended`,
    )
    .argument('<id>', 'the job id')
    .requiredOption(
      '--quota-share <share>',
      'the new share, more than 0 and at most 1',
      share('--quota-share'),
    )
    .action(async (id: string, flags: { quotaShare: number }, command: Command) => {
      await rewrite(command, id, 'throttle', (job) => ({ ...job, quotaShare: flags.quotaShare }));
    });
}
