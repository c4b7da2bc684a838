// Defaults of `rerun start` (each can be given per job): how much of the shared quota a
// rerun may take, how it is chunked and cut into bulks, and how long the CLI follows a job.
import { z } from 'zod';
import { RERUN_LIMITS } from '../../rerun/rerun-job.ts';
import { durationMs } from '../fields.ts';

const { batchSize } = RERUN_LIMITS;

export const rerunSection = z.strictObject({
  quotaShare: z
    .number()
    .gt(0, 'must be more than 0')
    .max(1)
    .default(0.5)
    .describe(
      'The most of each quota window a rerun may take, and only what live records leave: more than 0, at most 1.',
    ),
  batchSize: z
    .number()
    .int()
    .min(batchSize.min)
    .max(batchSize.max)
    .default(batchSize.max)
    .describe('Stored partners a rerun reads per chunk: the unit of its progress and of resuming.'),
  maxBulkTasks: z
    .number()
    .int()
    .min(1)
    .max(batchSize.max)
    .default(50)
    .describe(
      "Most lookup tasks in one of a rerun's bulks: each is created, read and written in one piece, and live " +
        'records beside a rerun wait behind it.',
    ),
  maxEventLoopUtilization: z
    .number()
    .gt(0)
    .max(1)
    .default(0.8)
    .describe(
      "A rerun takes its next chunk only while the process's event loop was busy at most this part of the time " +
        'since the last one: live records keep the CPU they need; 1 turns the check off.',
    ),
  waitTimeoutMs: durationMs(0).describe(
    'How long `rerun start --wait` and `rerun status --follow` follow a job before exiting 4; 0: until it ends.',
  ),
});
