// Writes test/support/file-durations.json from a vitest JSON report, for the sequencer that
// runs the longest files first (duration-sequencer.ts). Run it after a full `npm test` on the
// machine CI runs on, when files were added or their durations moved:
//   node test/support/record-durations.ts [test-results/vitest.json]
import { readFileSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { RECORDED_FILE, type RecordedDurations } from './duration-sequencer.ts';

interface VitestJsonReport {
  readonly startTime: number;
  readonly testResults: readonly {
    readonly name: string;
    readonly startTime: number;
    readonly endTime: number;
  }[];
}

const root = resolve(import.meta.dirname, '../..');
const reportPath = process.argv[2] ?? 'test-results/vitest.json';
const report = JSON.parse(readFileSync(reportPath, 'utf8')) as VitestJsonReport;

const seconds: Record<string, number> = {};
for (const file of [...report.testResults].sort((a, b) => (a.name < b.name ? -1 : 1))) {
  seconds[relative(root, file.name)] = Math.round((file.endTime - file.startTime) / 100) / 10;
}
const recorded: RecordedDurations = {
  recordedFrom: `npm test started ${new Date(report.startTime).toISOString()}`,
  seconds,
};
writeFileSync(RECORDED_FILE, `${JSON.stringify(recorded, null, 2)}\n`);
console.log(
  `${Object.keys(seconds).length} files recorded in ${relative(process.cwd(), RECORDED_FILE.pathname)}`,
);
