// How fast and how much: bulk sizes, quota, rate limits, retries and result polling.
import { z } from 'zod';
import { durationMs, nonEmptyString, positiveInt, positiveMs, startNotAboveCap } from '../fields.ts';

export const batchingSection = z.strictObject({
  maxTasks: z.number().int().min(1).max(10_000).default(500).describe('Lookup tasks per bulk.'),
  lingerMs: durationMs(100).describe('How long a partly filled bulk waits for more records.'),
  maxInFlightRecords: positiveInt(5_000).describe('Records read but not yet written; intake pauses above.'),
  maxConcurrentBulks: positiveInt(4).describe('Bulks submitted and not yet completed.'),
});

export const quotaSection = z
  .strictObject({
    serviceTechnicalKey: nonEmptyString()
      .default('REFDATA_BULK_LOOKUP')
      .describe('Quota the tasks are consumed from.'),
    enabled: z.boolean().default(true).describe('Check and consume quota before each bulk.'),
    initialBackoffMs: durationMs(500).describe('First wait after the quota ran out.'),
    maxBackoffMs: durationMs(30_000).describe(
      'Longest wait between quota checks; at most an eighth of the window where the service tells its length.',
    ),
  })
  .superRefine(startNotAboveCap('initialBackoffMs', 'maxBackoffMs'));

export const rateLimitSection = z.strictObject({
  requestsPerSecond: z.number().positive().default(20).describe('HTTP requests per second to the service.'),
  // Enough for the rate at a second of latency (requests/s x seconds in flight), with room for
  // requests that wait out a 429's Retry-After in their slot: at 8, waiting slots capped the
  // throughput under 50 % 429s at about half of what the Retry-After allows.
  concurrency: positiveInt(32).describe('HTTP requests in flight to the service.'),
});

export const retrySection = z
  .strictObject({
    maxAttempts: positiveInt(5).describe('Attempts of a failed request, the first included.'),
    initialDelayMs: positiveMs(200).describe('Wait before the first retry.'),
    maxDelayMs: positiveMs(30_000).describe('Longest wait between retries.'),
  })
  .superRefine(startNotAboveCap('initialDelayMs', 'maxDelayMs'));

export const pollingSection = z
  .strictObject({
    initialDelayMs: durationMs(100).describe('First wait before asking for bulk results.'),
    maxDelayMs: durationMs(5_000).describe('Longest wait between result polls.'),
    pageSize: z.number().int().min(1).max(1_000).default(1_000).describe('Results fetched per page.'),
  })
  .superRefine(startNotAboveCap('initialDelayMs', 'maxDelayMs'));
