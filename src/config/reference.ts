// The option reference of docs/CONFIGURATION.md, generated from the schema.
// test/config/configuration-doc.test.ts fails when the document differs from this.
import { configOptions, type OptionInfo } from './options.ts';

export const REFERENCE_COLUMNS = [
  'Option',
  'Type',
  'Default',
  'Environment variable',
  'Description',
] as const;

const code = (text: string) => `\`${text}\``;

function row(option: OptionInfo): string[] {
  const description = option.secret
    ? `${option.description} Secret: redacted wherever shown.`
    : option.description;
  return [
    code(option.path),
    option.type,
    option.hasDefault ? code(JSON.stringify(option.defaultValue)) : '—',
    code(option.envVar),
    description,
  ];
}

/** One row of cells per option, in schema order. */
export const referenceRows = (): string[][] => configOptions.map(row);

/** The reference as a Markdown table. */
export function renderReferenceTable(): string {
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`;
  return [
    line(REFERENCE_COLUMNS),
    line(REFERENCE_COLUMNS.map(() => '---')),
    ...referenceRows().map(line),
  ].join('\n');
}
