// One temporary directory per test run, removed at its end: every file and process of the
// run that asks os.tmpdir() (state directories, NDJSON outputs, CLI children) writes under it,
// so a test that does not clean up after itself leaves nothing behind on the machine (runs
// had left hundreds of directories in /tmp).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  // Both projects list this setup: the first makes the root, the second finds it.
  if (process.env.PARTNER_ENRICH_TEST_TMPDIR) return () => {};
  const root = mkdtempSync(join(tmpdir(), 'partner-enrich-tests-'));
  process.env.PARTNER_ENRICH_TEST_TMPDIR = root;
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true, maxRetries: 3 });
}
