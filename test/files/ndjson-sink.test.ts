// The NDJSON output files of `demo` and file runs, written by a real process on a real file system.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Sends `count` match lines of 100 bytes in one batch under a file size limit of `limitKiB`
 * (`ulimit -f`: the kernel writes what fits, then refuses with EFBIG); prints how send() ended.
 */
function sendUnderFileSizeLimit(dir: string, count: number, limitKiB: number): string {
  const script = `
    import { NdjsonSink } from ${JSON.stringify(new URL('../../src/files/ndjson-sink.ts', import.meta.url).pathname)};
    const sink = await NdjsonSink.create(${JSON.stringify(dir)});
    const messages = Array.from({ length: ${count} }, (_, i) => ({
      output: 'matches', key: 'P' + i, value: { partnerId: 'P' + i, pad: 'x'.repeat(70) },
    }));
    const outcome = await sink.send(messages).then(() => 'written', (error) => 'failed ' + error.code);
    await sink.close();
    console.log(outcome);
  `;
  const child = spawnSync(
    'bash',
    ['-c', `ulimit -f ${limitKiB} && exec "${process.execPath}" --input-type=module -e "$0"`, script],
    {
      encoding: 'utf8',
    },
  );
  expect(child.stderr).toBe('');
  return child.stdout.trim();
}

describe('NdjsonSink', () => {
  it('regression: a batch the system wrote only part of (a file size limit, a full disk) counted as written, and a run ending on it left a torn last line with exit 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ndjson-sink-'));
    expect(sendUnderFileSizeLimit(dir, 30, 2)).toBe('failed FILE_OUTPUT_UNWRITABLE');
    // What the limit let through, the failure reported: the run fails, nothing counts as done.
    expect((await readFile(join(dir, 'matches.ndjson'))).length).toBe(2048);
  });

  it('writes a batch within the limit whole', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ndjson-sink-'));
    expect(sendUnderFileSizeLimit(dir, 10, 2)).toBe('written');
    const lines = (await readFile(join(dir, 'matches.ndjson'), 'utf8')).split('\n');
    expect(lines).toHaveLength(11);
    expect(JSON.parse(lines[9] as string)).toMatchObject({ partnerId: 'P9' });
  });
});
