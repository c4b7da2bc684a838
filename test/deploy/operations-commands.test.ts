// Every `partner-enrich` command line docs/OPERATIONS.md shows exists: its commands and
// options, as the CLI declares them for its --help.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { commandLineProblems, documentedCommandLines, readCli, type CliCommand } from './support/cli-help.ts';

const operations = readFileSync(new URL('../../docs/OPERATIONS.md', import.meta.url), 'utf8');
let cli: CliCommand;
beforeAll(async () => {
  cli = await readCli();
}, 60_000);

const problemsOf = (lines: string[][]): string[] => lines.flatMap((line) => commandLineProblems(line, cli));

describe('docs/OPERATIONS.md command lines', () => {
  it('name only commands and options the CLI has', () => {
    const lines = documentedCommandLines(operations, cli);
    expect(lines.length).toBeGreaterThan(20);
    // The runbooks' tools are among them.
    const shown = new Set(lines.map((line) => line.slice(0, 2).join(' ')));
    for (const command of [
      'dlq replay',
      'rerun start',
      'rerun pause',
      'rerun resume',
      'rerun cancel',
      'rerun throttle',
      'rerun status',
      'config check',
    ])
      expect(shown).toContain(command);
    expect(problemsOf(lines)).toEqual([]);
  });
});

describe('the command line check (planted mistakes)', () => {
  it('rejects an option the command does not have', () => {
    const doc = '```sh\npartner-enrich dlq replay --dry-run --reason DECODE_NOT_AVRO\n```\n';
    expect(problemsOf(documentedCommandLines(doc, cli))).toEqual([
      'partner-enrich dlq replay has no option --reason',
    ]);
  });

  it('rejects a command that does not exist, also in inline code', () => {
    const doc = 'Stop it with `rerun stop <id>`, or `partner-enrich dlq purge`.';
    expect(problemsOf(documentedCommandLines(doc, cli))).toEqual([
      'partner-enrich rerun has no command stop',
      'partner-enrich dlq has no command purge',
    ]);
  });

  it('rejects an option of another command, and a command line that stops where a command is needed', () => {
    expect(commandLineProblems(['rerun', '--json'], cli)).toEqual([
      'partner-enrich rerun has no option --json',
    ]);
    expect(commandLineProblems(['topics'], cli)).toEqual(['partner-enrich topics needs a command']);
  });

  it('reads the values of options that take one or many, and leaves comments out', () => {
    const doc =
      '```sh\npartner-enrich rerun start --country DE AT --tag a b --quota-share 0.3 --wait   # two tags\n```\n';
    const lines = documentedCommandLines(doc, cli);
    expect(lines).toEqual([
      ['rerun', 'start', '--country', 'DE', 'AT', '--tag', 'a', 'b', '--quota-share', '0.3', '--wait'],
    ]);
    expect(problemsOf(lines)).toEqual([]);
    expect(commandLineProblems(['rerun', 'start', '--quota-share', '--wait', '--if-busy'], cli)).toEqual([
      'partner-enrich rerun start has no option --if-busy',
    ]);
  });
});
