// How outputs and consumed offsets reach Kafka: at-least-once (idempotent producer, offsets
// committed after the outputs are acknowledged) or exactly-once (outputs and offsets in one
// Kafka transaction per input partition and commit interval; docs/GUARANTEES.md).
import { z } from 'zod';

export const DELIVERY_MODES = ['at-least-once', 'exactly-once'] as const;

export type DeliveryMode = (typeof DELIVERY_MODES)[number];

/** The broker's default transaction.max.timeout.ms: a longer timeout is refused when a producer starts. */
const BROKER_MAX_TRANSACTION_TIMEOUT_MS = 900_000;

export const deliverySection = z
  .enum(DELIVERY_MODES)
  .default('at-least-once')
  .describe(
    'at-least-once: outputs acknowledged, then offsets committed (a crash may repeat outputs). ' +
      'exactly-once (Kafka input only): outputs and offsets in one transaction per input partition; ' +
      'read_committed consumers see each output once (docs/GUARANTEES.md).',
  );

export const exactlyOnceSection = z
  .strictObject({
    commitIntervalMs: z
      .number()
      .int()
      .min(10)
      .max(BROKER_MAX_TRANSACTION_TIMEOUT_MS)
      .default(1_000)
      .describe(
        'How often each input partition commits its finished outputs and offsets in one transaction ' +
          '(delivery exactly-once): the latency read_committed consumers see, against the cost of a transaction.',
      ),
    transactionTimeoutMs: z
      .number()
      .int()
      .min(1_000)
      .max(BROKER_MAX_TRANSACTION_TIMEOUT_MS)
      .default(60_000)
      .describe(
        'How long the broker lets a transaction stay open before it aborts it (delivery exactly-once): ' +
          'bounds how long a dead or paused producer holds read_committed consumers back.',
      ),
  })
  .superRefine((section, ctx) => {
    // A transaction lives a commit interval at least: a timeout below it aborts every one.
    if (section.transactionTimeoutMs <= section.commitIntervalMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['transactionTimeoutMs'],
        message: `must exceed exactlyOnce.commitIntervalMs (${section.commitIntervalMs}): raise it, or lower that`,
      });
    }
  });
