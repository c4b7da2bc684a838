// Setup file of the integration project: an unhandled rejection fails the test during which
// it happened. Vitest alone (`dangerouslyIgnoreUnhandledErrors` is false by default) already
// prints "Unhandled Errors" and makes the run exit 1, but it still counts the test as passed,
// so the closing count line (.ci/count-results.ts) would read "N passed, 0 failed". A
// rejection after a file's last test fails the file instead (afterAll).
import { afterAll, afterEach } from 'vitest';

const unhandled: unknown[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(reason));

function failOnUnhandled(): void {
  if (unhandled.length === 0) return;
  const reasons = unhandled.splice(0);
  throw new AggregateError(
    reasons,
    `${reasons.length} unhandled rejection(s): ${reasons.map((reason) => String(reason)).join('; ')}`,
  );
}

afterEach(failOnUnhandled);
afterAll(failOnUnhandled);
