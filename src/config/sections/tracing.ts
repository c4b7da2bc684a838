// OpenTelemetry tracing of `run`: off unless enabled, so that a process nobody collects traces
// from loads no SDK and writes no trace headers.
import { z } from 'zod';
import { httpUrl, nonEmptyString, ratio } from '../fields.ts';

export const TRACE_PROTOCOLS = ['http/protobuf', 'http/json'] as const;

export const tracingSection = z.strictObject({
  enabled: z
    .boolean()
    .default(false)
    .describe(
      'Export OpenTelemetry spans of `run` (consume, quota check, bulk submit, poll, page read, produce) ' +
        'and carry the W3C traceparent from input to output records (docs/OBSERVABILITY.md).',
    ),
  serviceName: nonEmptyString().default('partner-enrich').describe('`service.name` of the exported spans.'),
  endpoint: httpUrl()
    .default('http://127.0.0.1:4318')
    .describe('Root of the OTLP/HTTP receiver (a collector); spans are sent to `{endpoint}/v1/traces`.'),
  protocol: z
    .enum(TRACE_PROTOCOLS)
    .default('http/protobuf')
    .describe('OTLP encoding of the export: binary protobuf (the OTLP default) or JSON.'),
  sampleRatio: ratio(1).describe(
    'Part of the traces that start here (input records without a traceparent, bulks, reruns) that is ' +
      'recorded; a record with a traceparent follows its sampled flag.',
  ),
});
