// A logger writing into memory, for tests that read what an operator would see.
import { Writable } from 'node:stream';
import { createLogger, type LogLevel } from '../../src/observability/logger.ts';
import type { Redactor } from '../../src/observability/secret-redactor.ts';

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** `lines()` parses what was written so far; `text()` is it as written. */
export function capturedLogger(level: LogLevel = 'info', secrets?: Redactor) {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = createLogger({ level, destination, ...(secrets ? { secrets } : {}) });
  const text = () => chunks.join('');
  const lines = () =>
    text()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogLine);
  return { logger, text, lines };
}
