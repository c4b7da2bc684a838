// The whole configuration of `partner-enrich`, one section per concern. Sections are
// prefaulted with `{}` so that their own defaults apply when a source leaves them out.
import { z } from 'zod';
import { deliverySection, exactlyOnceSection } from './sections/delivery.ts';
import { kafkaSection, schemaRegistrySection, topicsSection } from './sections/kafka.ts';
import { rerunScheduleSection } from './sections/rerun-schedule.ts';
import { lookupSection, refdataSection } from './sections/refdata.ts';
import { rerunSection } from './sections/rerun.ts';
import { tracingSection } from './sections/tracing.ts';
import {
  filesSection,
  mappingSection,
  observabilitySection,
  shutdownSection,
  stateSection,
} from './sections/runtime.ts';
import {
  batchingSection,
  pollingSection,
  quotaSection,
  rateLimitSection,
  retrySection,
} from './sections/throughput.ts';
import { nonEmptyString } from './fields.ts';

const sections = z.strictObject({
  source: z.enum(['kafka', 'file']).default('kafka').describe('Where partner records come from.'),
  inputFormat: z
    .enum(['avro', 'json'])
    .default('avro')
    .describe(
      "Encoding of Kafka input: Avro through the schema registry, or PartnerRecord JSON (plain, or behind the wire header of Confluent's JSON Schema serializer).",
    ),
  kafka: kafkaSection.prefault({}),
  schemaRegistry: schemaRegistrySection.prefault({}),
  topics: topicsSection.prefault({}),
  files: filesSection.prefault({}),
  refdata: refdataSection.prefault({}),
  lookup: lookupSection.prefault({}),
  batching: batchingSection.prefault({}),
  quota: quotaSection.prefault({}),
  rateLimit: rateLimitSection.prefault({}),
  retry: retrySection.prefault({}),
  polling: pollingSection.prefault({}),
  delivery: deliverySection,
  exactlyOnce: exactlyOnceSection.prefault({}),
  skipUnchanged: z
    .boolean()
    .default(true)
    .describe('Skip records whose content matches what the storage already holds.'),
  mapping: mappingSection.prefault({}),
  storageId: nonEmptyString().default('partners.storage').describe('Storage the results are kept under.'),
  state: stateSection.prefault({}),
  rerun: rerunSection.prefault({}),
  observability: observabilitySection.prefault({}),
  tracing: tracingSection.prefault({}),
  shutdown: shutdownSection.prefault({}),
  rerunSchedule: rerunScheduleSection.prefault({}),
});

export const configSchema = sections.superRefine((config, ctx) => {
  // A mapping file reads JSON: given Avro bytes, every record would be a dead letter whose
  // reason ("not valid UTF-8", "not JSON") blames the publisher for the configuration.
  if (config.source === 'kafka' && config.inputFormat === 'avro' && config.mapping.file !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['mapping', 'file'],
      message: 'maps JSON input: set inputFormat json, or leave mapping.file unset for Avro input',
    });
  }
});

/** The validated configuration: every default applied, every endpoint resolved. */
export type Config = z.output<typeof configSchema>;

/** What a source may contain: every field optional where a default exists. */
export type ConfigInput = z.input<typeof configSchema>;
