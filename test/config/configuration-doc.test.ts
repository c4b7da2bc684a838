import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_ERROR_CODES, ENV_SHORTHANDS, RENAMED_OPTIONS } from '../../src/config/index.ts';
import { REFERENCE_COLUMNS, referenceRows } from '../../src/config/reference.ts';
import { tableRows } from '../support/markdown.ts';

const doc = readFileSync(new URL('../../docs/CONFIGURATION.md', import.meta.url), 'utf8');

function referenceSection(): string {
  const start = doc.indexOf('<!-- reference:start -->');
  const end = doc.indexOf('<!-- reference:end -->');
  expect(start, 'reference markers in docs/CONFIGURATION.md').toBeGreaterThan(-1);
  return doc.slice(start, end);
}

describe('docs/CONFIGURATION.md', () => {
  it('lists every option with its type, default and environment variable, as the schema has them', () => {
    expect(tableRows(referenceSection())).toEqual([[...REFERENCE_COLUMNS], ...referenceRows()]);
  });

  it('documents every error code', () => {
    for (const code of CONFIG_ERROR_CODES) expect(doc).toContain(`| \`${code}\``);
  });

  it('documents every renamed option with its new name', () => {
    const rows = tableRows(doc);
    for (const [from, to] of Object.entries(RENAMED_OPTIONS))
      expect(rows).toContainEqual([`\`${from}\``, `\`${to}\``]);
  });

  it('documents every environment shorthand', () => {
    const rows = tableRows(doc);
    for (const [envVar, path] of Object.entries(ENV_SHORTHANDS))
      expect(rows).toContainEqual([`\`${envVar}\``, `\`${path}\``]);
  });
});
