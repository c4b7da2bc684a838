// How the process runs: input files, logging, the metrics endpoint and shutdown.
import { z } from 'zod';
import { durationMs, nonEmptyString, positiveInt } from '../fields.ts';

export const filesSection = z.strictObject({
  input: nonEmptyString()
    .optional()
    .describe(
      'NDJSON input when source is file. Unset: the examples/partners.ndjson that comes with partner-enrich, wherever the command is started.',
    ),
  outputDir: nonEmptyString().default('out').describe('Where outputs go when source is file.'),
  maxRecordBytes: positiveInt(1_048_576).describe(
    'Longest line of the NDJSON input, in bytes, read as a record. A longer line is read to its end without ' +
      "being kept and becomes a dead letter FILE_RECORD_TOO_LARGE holding its first 1 KiB. 1 MiB is Kafka's " +
      'default message.max.bytes; a partner record is a few KB.',
  ),
});

export const mappingSection = z.strictObject({
  file: nonEmptyString()
    .optional()
    .describe('Mapping file from input fields to PartnerRecord; built-in when unset.'),
});

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const observabilitySection = z.strictObject({
  logLevel: z.enum(LOG_LEVELS).default('info').describe('Lowest level written to the log.'),
  metricsPort: z
    .number()
    .int()
    .min(0)
    .max(65_535)
    .default(9464)
    .describe('Port of /metrics, /healthz, /readyz; 0 picks a free port.'),
  metricsHost: nonEmptyString().default('127.0.0.1').describe('Interface the metrics endpoint listens on.'),
});

export const stateSection = z.strictObject({
  dir: nonEmptyString()
    .optional()
    .describe(
      'Where the partner state of the partitions this replica owns is kept on disk (locked by one process); ' +
        'a restart on the same directory reads only the tail of the storage topic, and writes to the state ' +
        'topic what a killed process had paid for and not yet recorded there (`ledger-journal/`). Unset: a ' +
        'private temporary directory, removed at exit (but for a journal the state topic refused), so every ' +
        'start restores from the storage topic; a start on the same machine takes over the journals its ' +
        "state topic's killed processes left there.",
    ),
  checkpointIntervalMs: durationMs(10_000).describe(
    'How often the partner state records how far it reflects the storage topic (also at stop).',
  ),
});

export const shutdownSection = z.strictObject({
  graceMs: durationMs(30_000).describe('Time in-flight work gets to finish on SIGTERM.'),
});
