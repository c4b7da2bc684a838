// The process's one logger: JSON lines on stdout (or a given stream), with credentials
// censored by pino before serialisation, so a secret passed in a logged object never
// reaches the output. Message strings are not censored: never interpolate a secret.
import { pino, stdSerializers, stdTimeFunctions, type DestinationStream, type Level } from 'pino';
import { LOG_CENSOR, redactedLogPaths } from './log-redaction.ts';

export type Logger = pino.Logger;
export type LogLevel = Level | 'silent';

export interface LoggerOptions {
  level: LogLevel;
  /** Where the JSON lines go; stdout when absent. Tests pass a stream to read them back. */
  destination?: DestinationStream;
}

/**
 * The error's message, then each cause's that it does not already quote. pino's serializer
 * appends every cause's message, and partner-enrich's errors quote their cause's already
 * (`outputs could not be written: <the sink's message>`): fatal lines said it twice.
 */
function messageWithNewCauses(error: Error): string {
  let message = error.message;
  const seen = new Set<unknown>([error]);
  for (let cause = error.cause; cause instanceof Error && !seen.has(cause); cause = cause.cause) {
    seen.add(cause);
    if (cause.message && !message.includes(cause.message)) message += `: ${cause.message}`;
  }
  return message;
}

function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return stdSerializers.err(error as Error);
  const serialized = stdSerializers.err(error);
  serialized.message = messageWithNewCauses(error);
  return serialized;
}

export function createLogger({ level, destination }: LoggerOptions): Logger {
  const options: pino.LoggerOptions = {
    name: 'partner-enrich',
    level,
    timestamp: stdTimeFunctions.isoTime,
    redact: { paths: [...redactedLogPaths], censor: LOG_CENSOR },
    serializers: { err: serializeError },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
