// The run's log as an operator reads it: a burst of per-record events is one line with a count.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { logObserver } from '../../src/cli/log-observer.ts';
import { capturedLogger } from '../support/captured-log.ts';

function capture() {
  const { logger, lines } = capturedLogger();
  return { lines, observer: logObserver(logger) };
}

describe('logObserver', () => {
  it('regression: a failed bulk of 500 records logs one line for their retries, not 500', async () => {
    const { lines, observer } = capture();
    for (let i = 0; i < 500; i += 1) observer.retry?.('REFDATA_SERVER_ERROR', 1);
    observer.bulkFailed?.(500, 'REFDATA_SERVER_ERROR', 40);
    await nextTurn();
    const retried = lines().filter((line) => line.msg === 'lookups retried');
    expect(retried).toEqual([
      expect.objectContaining({ code: 'REFDATA_SERVER_ERROR', attempt: 1, records: 500 }),
    ]);
    expect(lines().filter((line) => line.msg === 'bulk failed')).toHaveLength(1);
  });

  it('logs dead letters once per stage and code in a turn, with how many records', async () => {
    const { lines, observer } = capture();
    for (let i = 0; i < 3; i += 1) observer.deadLetter?.('lookup', 'TASK_FAILED');
    observer.deadLetter?.('mapping', 'MAPPING_MISSING_FIELD');
    await nextTurn();
    observer.deadLetter?.('lookup', 'TASK_FAILED');
    await nextTurn();
    const deadLettered = lines()
      .filter((line) => line.msg === 'records dead-lettered')
      .map(({ stage, code, records }) => ({ stage, code, records }));
    expect(deadLettered).toEqual([
      { stage: 'lookup', code: 'TASK_FAILED', records: 3 },
      { stage: 'mapping', code: 'MAPPING_MISSING_FIELD', records: 1 },
      { stage: 'lookup', code: 'TASK_FAILED', records: 1 },
    ]);
  });

  it('regression: a restart adopting 300 submission intents logged 300 warnings, one per partner', async () => {
    const { lines, observer } = capture();
    for (let i = 0; i < 300; i += 1) observer.intentAdopted?.(1, true);
    observer.intentAdopted?.(2, true);
    observer.intentAdopted?.(3, false);
    await nextTurn();
    const adopted = lines().filter((line) =>
      line.msg.startsWith('submission intents of a dead submitter adopted'),
    );
    expect(adopted).toEqual([
      expect.objectContaining({
        level: 40,
        paid: true,
        records: 302,
        msg: expect.stringContaining('under the quota it consumed'),
      }),
      expect.objectContaining({
        level: 40,
        paid: false,
        records: 3,
        msg: expect.stringContaining('consuming quota'),
      }),
    ]);
  });

  describe('records not keyed by their partner id', () => {
    afterEach(() => void vi.useRealTimers());
    const at = (partition: number, offset: number) => ({ topic: 'partners', partition, offset });
    const warnings = (lines: () => { msg: string }[]) =>
      lines().filter((line) => line.msg.startsWith('input records not keyed by their partner id'));

    it('warns at the first, then at most once a minute with the counts since', async () => {
      vi.useFakeTimers();
      const { lines, observer } = capture();
      observer.keyNotPartnerId?.(at(2, 17), true);
      observer.keyNotPartnerId?.(at(0, 4), false);
      await vi.advanceTimersByTimeAsync(0);
      for (let i = 0; i < 50; i += 1) observer.keyNotPartnerId?.(at(1, 100 + i), i % 5 === 0);
      await vi.advanceTimersByTimeAsync(59_000);
      expect(warnings(lines)).toEqual([
        expect.objectContaining({
          level: 40,
          records: { missing: 1, other: 1 },
          example: 'partners[2]@17 (no key)',
        }),
      ]);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(warnings(lines)).toHaveLength(2);
      expect(warnings(lines)[1]).toEqual(
        expect.objectContaining({ records: { missing: 10, other: 40 }, example: 'partners[1]@100 (no key)' }),
      );
      // Nothing more came: nothing more is logged.
      await vi.advanceTimersByTimeAsync(120_000);
      expect(warnings(lines)).toHaveLength(2);
    });
  });

  it('warns once at start of what the bulk ledger journal wrote to the state topic for a killed process', () => {
    const { lines, observer } = capture();
    observer.ledgerJournalRepublished?.({ paid: 1, bulks: 2, records: 600 });
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 40,
        paid: 1,
        bulks: 2,
        records: 600,
        msg: expect.stringContaining('bulk ledger journal'),
      }),
    ]);
  });
});
