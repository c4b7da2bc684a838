// Prints the command tree src/cli/main.ts builds, as JSON, instead of running a command: what
// the --help of every command lists, from one process (test/deploy/support/cli-help.ts).
import { Command } from 'commander';
import type { CliCommand } from './cli-help.ts';

const describe = (command: Command): CliCommand => ({
  name: command.name(),
  options: [
    ...command.options.map((option) => ({
      flag: option.long ?? option.short ?? '',
      arity: option.variadic
        ? ('many' as const)
        : option.required || option.optional
          ? ('one' as const)
          : ('none' as const),
    })),
    { flag: '--help', arity: 'none' as const },
  ],
  commands: command.commands.map(describe),
});

// Some module main.ts loads leaves a timer behind; the tree is all this process is for.
Command.prototype.parseAsync = async function (this: Command) {
  process.stdout.write(JSON.stringify(describe(this)), () => process.exit(0));
  return this;
};
await import('../../../src/cli/main.ts');
