// Prints `N passed, N failed[, N skipped]` summed over vitest's JSON reports (one per suite:
// `npm test`, `npm run test:chaos`, `npm run test:deploy`). A missing or empty report is a
// failure: a run that executed no test proves nothing.
import { readFileSync } from 'node:fs';

interface Report {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  numTotalTests: number;
  testResults: { name: string; status: string; message?: string; assertionResults: AssertionResult[] }[];
}

interface AssertionResult {
  fullName: string;
  status: string;
  failureMessages?: string[];
}

const files = process.argv.length > 2 ? process.argv.slice(2) : ['test-results/vitest.json'];
let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of files) {
  let report: Report;
  try {
    report = JSON.parse(readFileSync(file, 'utf8')) as Report;
  } catch (error) {
    failed += 1;
    console.error(`no test report at ${file}: ${(error as Error).message}`);
    continue;
  }
  // A test file that fails outside its tests (an import error, a failing hook) has no failed
  // test: before any test was collected it has none at all, after (a failing beforeAll) its
  // tests are skipped. It counts as one failure so that it cannot pass unnoticed.
  const brokenFiles = report.testResults.filter(
    (result) =>
      result.status === 'failed' && !result.assertionResults.some((test) => test.status === 'failed'),
  );
  for (const result of brokenFiles) {
    const reason = (result.message ?? '').split('\n')[0];
    console.error(`FAILED ${result.name.replace(process.cwd() + '/', '')} outside its tests: ${reason}`);
  }
  if (report.numPassedTests + report.numFailedTests === 0 && brokenFiles.length === 0) {
    failed += 1;
    console.error(`no test ran in ${file}`);
  }
  // CI shows only the tail of its output: name each failed test there, with the first line
  // of its failure, so that a red run says what to look at.
  for (const result of report.testResults) {
    for (const test of result.assertionResults) {
      if (test.status !== 'failed') continue;
      const reason = (test.failureMessages?.[0] ?? '').split('\n')[0];
      console.error(`FAILED ${result.name.replace(process.cwd() + '/', '')} > ${test.fullName}: ${reason}`);
    }
  }
  passed += report.numPassedTests;
  failed += report.numFailedTests + brokenFiles.length;
  skipped += report.numPendingTests + report.numTodoTests;
}
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
