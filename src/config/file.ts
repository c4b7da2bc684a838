// The configuration file: JSON or YAML. Both go through the YAML parser (YAML 1.2 reads
// JSON) because its errors give a line and column without quoting the file, whereas
// V8's JSON errors quote the text around the mistake, which may be a credential.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { ConfigError } from './errors.ts';
import { isPlainObject, type PlainObject } from './plain-objects.ts';

// Required only when there is a file to read: a process configured by its environment alone
// (the container's usual case) does not load the parser's 72 modules (20 ms of CPU) at start.
const require = createRequire(import.meta.url);

export function readConfigFile(file: string): PlainObject {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new ConfigError('CONFIG_FILE_UNREADABLE', `Cannot read configuration file ${file}: ${reason}`, {
      cause: error,
      details: { file, reason },
    });
  }

  const { parseDocument } = require('yaml') as typeof Yaml;
  const document = parseDocument(text);
  const [firstError] = document.errors;
  if (firstError) {
    const position = firstError.linePos?.[0];
    const where = position ? ` at line ${position.line}, column ${position.col}` : '';
    throw new ConfigError(
      'CONFIG_FILE_UNREADABLE',
      `Configuration file ${file} is not valid JSON or YAML${where} (${firstError.code})`,
      { details: { file, reason: firstError.code, ...position } },
    );
  }

  const content: unknown = document.toJS();
  // A file of comments only is an empty configuration: every default applies.
  if (content === null || content === undefined) return {};
  if (!isPlainObject(content)) {
    throw new ConfigError('CONFIG_INVALID', `Configuration file ${file} must hold an object of options`, {
      details: { file, problems: [{ path: '(root)', message: 'must be an object', source: `file ${file}` }] },
    });
  }
  return content;
}
