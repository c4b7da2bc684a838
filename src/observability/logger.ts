// The process's one logger: JSON lines on stdout (or a given stream), with credentials
// censored by pino before serialisation, so a secret passed in a logged object never
// reaches the output, and the secrets' values replaced in the written line, so that one
// quoted in a message (a dependency's error text) does not either.
import { pino, stdSerializers, stdTimeFunctions, type DestinationStream, type Level } from 'pino';
import { censorSecretMembers, LOG_CENSOR, redactedLogPaths } from './log-redaction.ts';
import { processSecrets, type Redactor } from './secret-redactor.ts';

export type Logger = pino.Logger;
export type LogLevel = Level | 'silent';

export interface LoggerOptions {
  level: LogLevel;
  /** Where the JSON lines go; stdout when absent. Tests pass a stream to read them back. */
  destination?: DestinationStream;
  /** The values replaced in every line; the process's secrets when absent. */
  secrets?: Redactor;
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

/**
 * The line with the secrets' values replaced. A replacement outside a JSON string (a secret
 * that looks like a number or a literal) would break the line: it is withheld then, its
 * level and time kept.
 */
function redactLine(written: string, secrets: Redactor): string {
  const line = censorSecretMembers(written);
  const clean = secrets.redact(line);
  if (clean === line) return line;
  try {
    JSON.parse(clean);
    return clean;
  } catch {
    const { level, time, name } = JSON.parse(line) as Record<string, unknown>;
    return `${JSON.stringify({ level, time, name, msg: 'log line withheld: it quoted a secret' })}\n`;
  }
}

export function createLogger({ level, destination, secrets = processSecrets }: LoggerOptions): Logger {
  const options: pino.LoggerOptions = {
    name: 'partner-enrich',
    level,
    timestamp: stdTimeFunctions.isoTime,
    redact: { paths: [...redactedLogPaths], censor: LOG_CENSOR },
    serializers: { err: serializeError },
    hooks: { streamWrite: (line) => redactLine(line, secrets) },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
