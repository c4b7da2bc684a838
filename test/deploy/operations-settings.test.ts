// docs/OPERATIONS.md names the configuration as it is: its settings table has a row for every
// option of the schema (src/config/options.ts, the list CONFIGURATION.md is generated from)
// with the option's environment variable, and every setting or variable the page names
// anywhere is one the configuration has.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configOptions, type OptionInfo } from '../../src/config/options.ts';
import { markedSection, tableRows } from '../support/markdown.ts';

const operations = readFileSync(new URL('../../docs/OPERATIONS.md', import.meta.url), 'utf8');

/** The file's path, read by the CLI itself rather than the configuration. */
const OTHER_VARIABLES = new Set(['PARTNER_ENRICH_CONFIG']);

const unquote = (cell = ''): string => cell.replace(/^`(.*)`$/, '$1');

/** What the page says wrong about the configuration; empty when nothing. */
function settingsProblems(doc: string, options: readonly OptionInfo[]): string[] {
  const table = markedSection(doc, 'settings');
  if (table === undefined) return ['no <!-- settings:start --> ... <!-- settings:end --> table'];
  const byPath = new Map(options.map((option) => [option.path, option]));
  const problems: string[] = [];
  const listed = new Set<string>();
  for (const [setting, variable] of tableRows(table).slice(1)) {
    const path = unquote(setting);
    const option = byPath.get(path);
    if (listed.has(path)) problems.push(`${path} has two rows`);
    listed.add(path);
    if (!option) problems.push(`${path} is not an option of the configuration`);
    else if (unquote(variable) !== option.envVar)
      problems.push(`${path}: its variable is ${option.envVar}, not ${unquote(variable)}`);
  }
  for (const option of options)
    if (!listed.has(option.path)) problems.push(`${option.path} has no row in the settings table`);

  // Outside the table: a dotted name in backticks that starts like an option is meant as one.
  const roots = new Set(options.map((option) => option.path.split('.')[0]));
  for (const [, name = ''] of doc.matchAll(/`([a-z][A-Za-z0-9]*(?:\.[A-Za-z0-9]+)+)`/g))
    if (roots.has(name.split('.')[0]) && !byPath.has(name))
      problems.push(`${name} is not an option of the configuration`);
  const variables = new Set(options.map((option) => option.envVar));
  for (const [name] of doc.matchAll(/\bPARTNER_ENRICH_[A-Z0-9_]+/g))
    if (!variables.has(name) && !OTHER_VARIABLES.has(name))
      problems.push(`${name} is not a variable of the configuration`);
  return [...new Set(problems)];
}

describe('docs/OPERATIONS.md settings', () => {
  it('has one row for every option of the configuration, with its variable, and names no other setting', () => {
    expect(configOptions.length).toBeGreaterThan(80);
    expect(settingsProblems(operations, configOptions)).toEqual([]);
  });
});

describe('the settings check (planted mistakes)', () => {
  it('rejects a row for a setting the configuration does not have', () => {
    const doc = operations.replace('| `batching.lingerMs`', '| `batching.lingerMillis`');
    expect(settingsProblems(doc, configOptions)).toEqual([
      'batching.lingerMillis is not an option of the configuration',
      'batching.lingerMs has no row in the settings table',
    ]);
  });

  it('rejects a missing row, as when an option is added to the schema', () => {
    const added = { ...configOptions[0], path: 'tracing.headers', envVar: 'PARTNER_ENRICH_TRACING__HEADERS' };
    expect(settingsProblems(operations, [...configOptions, added as OptionInfo])).toEqual([
      'tracing.headers has no row in the settings table',
    ]);
  });

  it('rejects a wrong variable', () => {
    const doc = operations.replace('`PARTNER_ENRICH_STATE__DIR`', '`PARTNER_ENRICH_STATE_DIR`');
    expect(settingsProblems(doc, configOptions)).toEqual([
      'state.dir: its variable is PARTNER_ENRICH_STATE__DIR, not PARTNER_ENRICH_STATE_DIR',
      'PARTNER_ENRICH_STATE_DIR is not a variable of the configuration',
    ]);
  });

  it('rejects a misspelt setting in the text', () => {
    const doc = `${operations}\nRaise \`kafka.sessionTimeout\` when replicas are slow.\n`;
    expect(settingsProblems(doc, configOptions)).toEqual([
      'kafka.sessionTimeout is not an option of the configuration',
    ]);
  });

  it('rejects a page without the settings table', () => {
    expect(settingsProblems('# Operations\n', configOptions)).toEqual([
      'no <!-- settings:start --> ... <!-- settings:end --> table',
    ]);
  });
});
