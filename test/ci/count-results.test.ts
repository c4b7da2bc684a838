// .ci/run's closing line is counted from vitest's JSON reports by .ci/count-results.ts. These
// run real vitest on small test files written here and count its real report.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const node = process.execPath;
const vitest = join(process.cwd(), 'node_modules/vitest/vitest.mjs');
const counter = join(process.cwd(), '.ci/count-results.ts');

let dir: string;
beforeAll(async () => {
  // Inside the repository, so that the files' `import 'vitest'` resolves.
  await mkdir('test-results', { recursive: true });
  dir = await mkdtemp(join(process.cwd(), 'test-results/count-results-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function reportOf(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(dir, 'run-'));
  for (const [name, text] of Object.entries(files)) await writeFile(join(root, name), text);
  await writeFile(join(root, 'vitest.config.mjs'), 'export default {};\n');
  const report = join(root, 'report.json');
  await exec(node, [vitest, 'run', '--root', root, '--reporter=json', `--outputFile=${report}`]).catch(
    () => undefined, // vitest exits 1 when a test fails: the report is what is counted
  );
  return report;
}

async function count(...reports: string[]): Promise<{ line: string; code: number }> {
  try {
    const { stdout } = await exec(node, [counter, ...reports]);
    return { line: stdout.trim(), code: 0 };
  } catch (error) {
    const failure = error as { stdout: string; code: number };
    return { line: failure.stdout.trim(), code: failure.code };
  }
}

const passing = `import { it } from 'vitest';\nit('passes', () => {});\n`;

describe('the closing count line', () => {
  it('counts passed tests and exits 0 when none failed', async () => {
    const report = await reportOf({ 'a.test.mjs': passing });
    expect(await count(report)).toEqual({ line: '1 passed, 0 failed', code: 0 });
  });

  it('counts a failed test', async () => {
    const report = await reportOf({
      'a.test.mjs': `import { it, expect } from 'vitest';\nit('fails', () => expect(1).toBe(2));\n`,
    });
    expect(await count(report)).toEqual({ line: '0 passed, 1 failed', code: 1 });
  });

  // The stop's CI printed "868 passed, 0 failed, 6 skipped" for a run whose deploy file failed
  // in beforeAll: its tests were collected, then skipped, and nothing counted the file.
  it('counts a file whose beforeAll failed after its tests were collected as failed', async () => {
    const report = await reportOf({
      'a.test.mjs': passing,
      'b.test.mjs': [
        `import { beforeAll, describe, it } from 'vitest';`,
        `describe('b', () => {`,
        `  beforeAll(() => { throw new Error('podman exited with 125'); });`,
        `  it('one', () => {});`,
        `  it('two', () => {});`,
        `});`,
      ].join('\n'),
    });
    expect(await count(report)).toEqual({ line: '1 passed, 1 failed, 2 skipped', code: 1 });
  });

  it('counts a file that fails to import as failed', async () => {
    const report = await reportOf({ 'a.test.mjs': `import './missing.mjs';\n` });
    expect(await count(report)).toEqual({ line: '0 passed, 1 failed', code: 1 });
  });

  it('counts a missing report as failed', async () => {
    expect(await count(join(dir, 'absent.json'))).toEqual({ line: '0 passed, 1 failed', code: 1 });
  });
});
