// `rerun`: scheduled full-storage reruns, kept as jobs in the internal state topic and
// executed by the `run` replicas that own the input partitions (docs/RERUNS.md).
import type { Command } from 'commander';
import { registerRerunControl } from './rerun-control.ts';
import { registerRerunStart } from './rerun-start.ts';
import { registerRerunStatus } from './rerun-status.ts';

export function registerRerun(program: Command): void {
  const rerun = program
    .command('rerun')
    .description(
      'look stored partners up again beside live traffic: start, watch, pause, resume, cancel and throttle ' +
        'rerun jobs (kept in the state topic, executed by the `run` replicas; see docs/RERUNS.md)',
    );
  registerRerunStart(rerun);
  registerRerunStatus(rerun);
  registerRerunControl(rerun);
}
