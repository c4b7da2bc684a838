// The whole configuration of `partner-enrich`, one section per concern. Sections are
// prefaulted with `{}` so that their own defaults apply when a source leaves them out.
import { z } from 'zod';
import { kafkaSection, schemaRegistrySection, topicsSection } from './sections/kafka.ts';
import { lookupSection, refdataSection } from './sections/refdata.ts';
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

export const configSchema = z.strictObject({
  source: z.enum(['kafka', 'file']).default('kafka').describe('Where partner records come from.'),
  inputFormat: z
    .enum(['avro', 'json'])
    .default('avro')
    .describe('Encoding of Kafka input: Avro through the schema registry, or PartnerRecord JSON.'),
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
  skipUnchanged: z
    .boolean()
    .default(true)
    .describe('Skip records whose content matches what the storage already holds.'),
  mapping: mappingSection.prefault({}),
  storageId: nonEmptyString().default('partners.storage').describe('Storage the results are kept under.'),
  state: stateSection.prefault({}),
  observability: observabilitySection.prefault({}),
  shutdown: shutdownSection.prefault({}),
});

/** The validated configuration: every default applied, every endpoint resolved. */
export type Config = z.output<typeof configSchema>;

/** What a source may contain: every field optional where a default exists. */
export type ConfigInput = z.input<typeof configSchema>;
