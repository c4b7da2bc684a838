// Fetches the broker and registry distributions from Maven Central with the machine's
// `mvn`, into a cache folder that git ignores. Maven keeps its own download cache
// (~/.m2), so a fresh clone on a machine that fetched before only copies files.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
const here = fileURLToPath(new URL('.', import.meta.url));
const COMPLETE_MARKER = '.complete';

export const cacheRoot = (): string => process.env.PARTNER_ENRICH_CACHE ?? join(here, '..', '..', '.cache');

async function mvn(args: string[]): Promise<void> {
  try {
    await run('mvn', ['-B', '-q', ...args], { maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`mvn ${args.join(' ')} failed:\n${stdout}${stderr}`, { cause: error });
  }
}

// Writes into a temporary folder and renames nothing: the marker file, written last,
// is what makes a folder count as complete, so an interrupted fetch is redone.
export async function fetchOnce(dir: string, fetch: (dir: string) => Promise<void>): Promise<string> {
  if (existsSync(join(dir, COMPLETE_MARKER))) return dir;
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await fetch(dir);
  await writeFile(join(dir, COMPLETE_MARKER), new Date().toISOString());
  return dir;
}

/** Folder of jars that run `kafka.Kafka` for this version (`java -cp 'libs/*'`). */
export async function fetchKafka(version: string): Promise<string> {
  const dir = join(cacheRoot(), 'kafka', version);
  await fetchOnce(dir, (target) =>
    mvn([
      '-f',
      join(here, 'kafka-pom.xml'),
      `-Dkafka.version=${version}`,
      'dependency:copy-dependencies',
      '-DincludeScope=runtime',
      `-DoutputDirectory=${join(target, 'libs')}`,
    ]),
  );
  return join(dir, 'libs');
}

/** Path of the Apicurio Registry runner jar for this version. */
export async function fetchApicurio(version: string): Promise<string> {
  const dir = join(cacheRoot(), 'apicurio', version);
  const archive = `apicurio-registry-app-${version}-all.tar.gz`;
  await fetchOnce(dir, async (target) => {
    await mvn([
      'dependency:copy',
      `-Dartifact=io.apicurio:apicurio-registry-app:${version}:tar.gz:all`,
      `-DoutputDirectory=${target}`,
    ]);
    await run('tar', ['xzf', archive], { cwd: target });
    await rm(join(target, archive));
  });
  // 3.0.x ships a runner jar; later versions the quarkus-app layout.
  const runner = join(dir, `apicurio-registry-app-${version}-runner.jar`);
  return existsSync(runner) ? runner : join(dir, 'quarkus-run.jar');
}
