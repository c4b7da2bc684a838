// The schedule on which `run` starts full-storage reruns itself (docs/RERUN-SCHEDULING.md).
// Neither `every` nor `cron` set: no schedule.
import { z } from 'zod';
import { cronProblem, intervalProblem, timezoneProblem } from '../../rerun/schedule-slots.ts';
import { nonEmptyString } from '../fields.ts';

/** A field checked by a function that says what is wrong with a value, or nothing. */
const checkedText = (problem: (text: string) => string | undefined) =>
  nonEmptyString().superRefine((text, ctx) => {
    const message = problem(text);
    if (message !== undefined) ctx.addIssue({ code: 'custom', message });
  });

export const rerunScheduleSection = z
  .strictObject({
    every: checkedText(intervalProblem)
      .optional()
      .describe(
        'Start a rerun at every multiple of this interval since 1970-01-01 UTC, e.g. `24h` (midnight UTC), `6h`, `30m`; at least `1m`, at most `365d`. Not with `cron`.',
      ),
    cron: checkedText(cronProblem)
      .optional()
      .describe(
        'Start a rerun at the times of this 5-field cron expression (minute hour day-of-month month day-of-week), e.g. `0 2 * * *`. Not with `every`.',
      ),
    timezone: checkedText(timezoneProblem)
      .optional()
      .describe('IANA time zone the `cron` expression is read in, e.g. `Europe/Berlin`; UTC when not set.'),
    catchUp: z
      .boolean()
      .default(false)
      .describe(
        'At start, create the most recent slot that passed while no replica was running, if its job does not exist; earlier missed slots are never made up.',
      ),
  })
  .superRefine((section, ctx) => {
    if (section.every !== undefined && section.cron !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['cron'], message: 'set either every or cron, not both' });
    }
    if (section.timezone !== undefined && section.cron === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['timezone'],
        message: 'applies to cron only (every counts from 1970-01-01 UTC)',
      });
    }
  });
