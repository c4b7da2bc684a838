// The process's one logger: JSON lines on stdout (or a given stream), with credentials
// censored by pino before serialisation, so a secret passed in a logged object never
// reaches the output. Message strings are not censored: never interpolate a secret.
import { pino, stdTimeFunctions, type DestinationStream, type Level } from 'pino';
import { LOG_CENSOR, redactedLogPaths } from './log-redaction.ts';

export type Logger = pino.Logger;
export type LogLevel = Level | 'silent';

export interface LoggerOptions {
  level: LogLevel;
  /** Where the JSON lines go; stdout when absent. Tests pass a stream to read them back. */
  destination?: DestinationStream;
}

export function createLogger({ level, destination }: LoggerOptions): Logger {
  const options: pino.LoggerOptions = {
    name: 'partner-enrich',
    level,
    timestamp: stdTimeFunctions.isoTime,
    redact: { paths: [...redactedLogPaths], censor: LOG_CENSOR },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
