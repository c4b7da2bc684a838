// Runs the longest test files first, from durations recorded in test/support/file-durations.json.
// vitest orders by its own cache of durations, which a clean clone (CI) does not have; it then
// runs larger files first, and a 100-line file that takes three minutes (its own three-broker
// cluster) ran last, alone on one worker while the other idled: 3-4 minutes of `npm test`.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export const RECORDED_FILE = new URL('./file-durations.json', import.meta.url);

/** Seconds per test file (path relative to the repository), as `record-durations.ts` writes them. */
export interface RecordedDurations {
  readonly recordedFrom: string;
  readonly seconds: Readonly<Record<string, number>>;
}

export interface SequencedFile {
  readonly groupOrder: number;
  readonly project: string;
  readonly path: string;
  /** Seconds, or undefined for a file with no duration known (new since the recording). */
  readonly duration: number | undefined;
  readonly failedLastTime: boolean;
}

/**
 * The order vitest's own sequencer keeps (group order, then project, then files that failed
 * last time), and within that the longest first: on two workers a long file started late sets
 * when the run ends. A file with no duration known goes first, as vitest runs unknown files
 * first: it may be the slowest.
 */
export function compareFiles(a: SequencedFile, b: SequencedFile): number {
  if (a.groupOrder !== b.groupOrder) return a.groupOrder - b.groupOrder;
  if (a.project !== b.project) return a.project < b.project ? -1 : 1;
  if (a.failedLastTime !== b.failedLastTime) return a.failedLastTime ? -1 : 1;
  const durationA = a.duration ?? Number.POSITIVE_INFINITY;
  const durationB = b.duration ?? Number.POSITIVE_INFINITY;
  if (durationA !== durationB) return durationB - durationA;
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

export function readRecordedDurations(): RecordedDurations {
  return JSON.parse(readFileSync(RECORDED_FILE, 'utf8')) as RecordedDurations;
}

export default class DurationSequencer extends BaseSequencer {
  readonly #recorded = readRecordedDurations().seconds;

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const keyed = files.map((spec) => {
      const path = relative(root, spec.moduleId);
      // vitest's own cache (a checkout that has run the tests) knows this machine's durations.
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${path}`);
      const file: SequencedFile = {
        groupOrder: spec.project.config.sequence.groupOrder,
        project: spec.project.name,
        path,
        duration: cached ? cached.duration / 1_000 : this.#recorded[path],
        failedLastTime: cached?.failed ?? false,
      };
      return { spec, file };
    });
    return keyed.sort((a, b) => compareFiles(a.file, b.file)).map(({ spec }) => spec);
  }
}
