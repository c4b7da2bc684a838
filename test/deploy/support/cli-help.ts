// Which commands and options the real `partner-enrich` CLI has, as src/cli/main.ts declares
// them (the source of every --help), and a check of a command line written in a document
// against them.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** How many values an option takes: `--dry-run` none, `--since <time>` one, `--tag <tag...>` any. */
export type Arity = 'none' | 'one' | 'many';

export interface CliCommand {
  name: string;
  options: { flag: string; arity: Arity }[];
  commands: CliCommand[];
}

/** The CLI's command tree, read from the program main.ts builds (support/print-cli.ts). */
export async function readCli(): Promise<CliCommand> {
  const { stdout } = await promisify(execFile)('node_modules/.bin/node', [
    'test/deploy/support/print-cli.ts',
  ]);
  return JSON.parse(stdout) as CliCommand;
}

/**
 * What is wrong with `partner-enrich <args>`: a command that does not exist, an option the
 * command does not have, a command missing where one is needed. A `<placeholder>` where a
 * command goes stands for any command.
 */
export function commandLineProblems(args: readonly string[], cli: CliCommand): string[] {
  const path: string[] = [];
  const name = () => ['partner-enrich', ...path].join(' ');
  let current = cli;
  for (let index = 0; index < args.length;) {
    const token = args[index] ?? '';
    index += 1;
    if (token.startsWith('-')) {
      const [flag = token] = token.split('=');
      const arity = current.options.find((option) => option.flag === flag)?.arity;
      if (!arity) return [`${name()} has no option ${flag}`];
      if (arity === 'one' && !token.includes('=')) index += 1;
      if (arity === 'many') while (index < args.length && !args[index]?.startsWith('-')) index += 1;
    } else if (current.commands.length > 0) {
      if (token.startsWith('<')) return [];
      const next = current.commands.find((command) => command.name === token);
      if (!next) return [`${name()} has no command ${token}`];
      path.push(token);
      current = next;
    }
  }
  return current.commands.length > 0 ? [`${name()} needs a command`] : [];
}

/** Shell words: quoted strings stay whole. */
const words = (line: string): string[] => line.match(/'[^']*'|"[^"]*"|\S+/g) ?? [];

/**
 * Every `partner-enrich ...` command line of a Markdown document, as argument lists: in code
 * blocks (comments and line continuations removed) and in inline code, where a span that
 * starts with one of the CLI's commands is one too, e.g. `rerun start --wait`.
 */
export function documentedCommandLines(markdown: string, cli: CliCommand): string[][] {
  const commands = new Set(cli.commands.map((command) => command.name));
  const lines: string[][] = [];
  const fromProgram = (tokens: string[]) => {
    const at = tokens.indexOf('partner-enrich');
    if (at !== -1 && at < tokens.length - 1) lines.push(tokens.slice(at + 1));
  };
  const blocks = [...markdown.matchAll(/^\s*```\w*\n([\s\S]*?)^\s*```/gm)];
  for (const [, body = ''] of blocks)
    for (const line of body.replace(/\\\n/g, ' ').split('\n'))
      fromProgram(words(line.replace(/\s#\s.*$/, '')));
  const prose = blocks.reduce((text, [block]) => text.replace(block, ''), markdown);
  for (const [, span = ''] of prose.matchAll(/`([^`\n]+)`/g)) {
    const tokens = words(span);
    if (tokens[0] === 'partner-enrich') fromProgram(tokens);
    else if (tokens.length > 1 && commands.has(tokens[0] ?? '')) lines.push(tokens);
  }
  return lines;
}
