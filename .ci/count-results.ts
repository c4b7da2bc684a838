// Prints `N passed, N failed[, N skipped]` from vitest's JSON report. A missing or
// empty report is a failure: a run that executed no test proves nothing.
import { readFileSync } from 'node:fs';

interface Report {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  numTotalTests: number;
  testResults: { name: string; status: string; assertionResults: unknown[] }[];
}

const file = process.argv[2] ?? 'test-results/vitest.json';
let report: Report;
try {
  report = JSON.parse(readFileSync(file, 'utf8')) as Report;
} catch (error) {
  console.log('0 passed, 1 failed');
  console.error(`no test report at ${file}: ${(error as Error).message}`);
  process.exit(1);
}
// A test file that fails before any test runs (an import error, a failing hook) has
// no assertion results; it counts as one failure so that it cannot pass unnoticed.
const brokenFiles = report.testResults.filter(
  (file) => file.status === 'failed' && file.assertionResults.length === 0,
);
for (const file of brokenFiles) console.error(`test file failed without running tests: ${file.name}`);
const failed = report.numFailedTests + brokenFiles.length;
const skipped = report.numPendingTests + report.numTodoTests;
console.log(`${report.numPassedTests} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || report.numPassedTests === 0 ? 1 : 0);
