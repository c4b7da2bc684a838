import type { Command } from 'commander';
import { describeConfig } from '../../config/index.ts';
import { commandConfig } from '../options.ts';

export function registerConfigCheck(program: Command): void {
  const config =
    program.commands.find((c) => c.name() === 'config') ??
    program.command('config').description('configuration');
  config
    .command('check')
    .description(
      'validate the configuration (file, environment, defaults) and print it with secrets redacted',
    )
    .action((_options, command: Command) => {
      console.log(describeConfig(commandConfig(command)));
    });
}
