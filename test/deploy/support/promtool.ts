// promtool, Prometheus' own checker of rule files, from Debian's `prometheus` package: the
// package is downloaded and only promtool is taken out of it (installing it would also set up
// a Prometheus server), once, into the cache the local infrastructure uses.
import { execFile } from 'node:child_process';
import { copyFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cacheRoot, fetchOnce } from '../../../deploy/local/artifacts.ts';

const run = promisify(execFile);

async function downloadPackage(dir: string): Promise<void> {
  try {
    await run('apt-get', ['download', 'prometheus'], { cwd: dir });
  } catch {
    // A machine whose package lists were never fetched knows no `prometheus` yet.
    await run('apt-get', ['update', '-q']);
    await run('apt-get', ['download', 'prometheus'], { cwd: dir });
  }
}

/** Path of a promtool binary. */
export async function fetchPromtool(): Promise<string> {
  const dir = join(cacheRoot(), 'promtool');
  await fetchOnce(dir, async (target) => {
    await downloadPackage(target);
    const deb = (await readdir(target)).find((name) => name.endsWith('.deb'));
    if (!deb) throw new Error(`apt-get download prometheus left no package in ${target}`);
    await run('dpkg-deb', ['-x', join(target, deb), join(target, 'package')]);
    await copyFile(join(target, 'package', 'usr', 'bin', 'promtool'), join(target, 'promtool'));
    await rm(join(target, 'package'), { recursive: true });
    await rm(join(target, deb));
  });
  return join(dir, 'promtool');
}

export interface PromtoolResult {
  code: number;
  output: string;
}

/** Runs promtool with these arguments; its exit code and what it printed. */
export async function promtool(binary: string, args: string[]): Promise<PromtoolResult> {
  try {
    const { stdout, stderr } = await run(binary, args);
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const { code, stdout = '', stderr = '' } = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof code === 'number' ? code : -1, output: stdout + stderr };
  }
}
