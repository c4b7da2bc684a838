// Kafka's own performance tools, fetched from Maven Central with the machine's `mvn` into the
// cache folder the broker's jars live in (deploy/local/artifacts.ts). The tools of the
// broker's version are used when Maven Central has them; `org.apache.kafka:kafka-tools` is
// not published for every broker release (4.4.0 has the broker but not the tools), so the
// newest earlier release is used then. PARTNER_ENRICH_KAFKA_TOOLS_VERSION chooses one.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cacheRoot } from '../../deploy/local/artifacts.ts';

const run = promisify(execFile);
const pom = fileURLToPath(new URL('./kafka-tools-pom.xml', import.meta.url));
/** Newest kafka-tools release on Maven Central when 4.4.0 came out without one. */
export const FALLBACK_TOOLS_VERSION = '4.3.1';

async function fetchTools(version: string): Promise<string> {
  const dir = join(cacheRoot(), 'kafka-tools', version);
  const libs = join(dir, 'libs');
  if (existsSync(join(dir, '.complete'))) return libs;
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await run(
    'mvn',
    [
      '-B',
      '-q',
      '-f',
      pom,
      `-Dkafka.version=${version}`,
      'dependency:copy-dependencies',
      '-DincludeScope=runtime',
      `-DoutputDirectory=${libs}`,
    ],
    { maxBuffer: 16 * 1024 * 1024 },
  ).catch(async (error: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw error;
  });
  await writeFile(join(dir, '.complete'), new Date().toISOString());
  return libs;
}

/** Folder of the tools' jars and the version they are. */
export async function kafkaTools(brokerVersion: string): Promise<{ version: string; libs: string }> {
  const wanted = process.env.PARTNER_ENRICH_KAFKA_TOOLS_VERSION;
  const candidates = wanted ? [wanted] : [...new Set([brokerVersion, FALLBACK_TOOLS_VERSION])];
  let failure: unknown;
  for (const version of candidates) {
    try {
      return { version, libs: await fetchTools(version) };
    } catch (error) {
      failure = error;
    }
  }
  throw new Error(`kafka-tools ${candidates.join(' or ')} could not be fetched with mvn`, { cause: failure });
}

/** Runs one tool class with the tools' class path; resolves with its standard output. */
export async function runTool(libs: string, mainClass: string, args: string[]): Promise<string> {
  const { stdout } = await run(
    'java',
    ['-Xmx512m', '-XX:+UseSerialGC', '-cp', `${libs}/*`, mainClass, ...args],
    { maxBuffer: 16 * 1024 * 1024, timeout: 10 * 60_000 },
  );
  return stdout;
}
