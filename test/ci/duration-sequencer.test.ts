// npm test runs on two workers; the order of the files decides how long the last one runs
// alone. The sequencer (vitest.config.ts) runs the longest first by recorded durations.
import { describe, expect, it } from 'vitest';
import { compareFiles, readRecordedDurations, type SequencedFile } from '../support/duration-sequencer.ts';

function file(path: string, duration: number | undefined, more: Partial<SequencedFile> = {}): SequencedFile {
  return { groupOrder: 1, project: 'integration', path, duration, failedLastTime: false, ...more };
}

const order = (files: SequencedFile[]): string[] => [...files].sort(compareFiles).map((f) => f.path);

describe('the order of test files', () => {
  it('regression: a short file that runs long (its own broker cluster) ran last by its size; now the longest run first', () => {
    expect(order([file('small-but-slow', 190), file('large', 40), file('quick', 2)])).toEqual([
      'small-but-slow',
      'large',
      'quick',
    ]);
  });

  it('keeps the group order and the project before the durations: unit files before integration ones', () => {
    const unit = file('unit-file', 5, { groupOrder: 0, project: 'unit' });
    expect(order([file('integration-file', 300), unit])).toEqual(['unit-file', 'integration-file']);
  });

  it('runs a file with no recorded duration first (it may be the slowest), and a file that failed last time before that', () => {
    const failed = file('failed', 1, { failedLastTime: true });
    expect(order([file('known', 100), file('new', undefined), failed])).toEqual(['failed', 'new', 'known']);
  });

  it('orders equal durations by path, so two runs order the same files the same way', () => {
    expect(order([file('b', 3), file('a', 3)])).toEqual(['a', 'b']);
  });

  it('reads the recorded durations committed beside it', () => {
    const { seconds } = readRecordedDurations();
    expect(seconds['test/cli/run-lifecycle.integration.test.ts']).toBeGreaterThan(60);
  });
});
