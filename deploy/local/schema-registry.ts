// Apicurio Registry with in-memory storage, serving the Confluent-compatible API
// (`/apis/ccompat/v7`) that @kafkajs/confluent-schema-registry speaks.
import { fetchApicurio } from './artifacts.ts';
import { freePort, startService, waitUntil, type RunDir } from './processes.ts';

export interface LocalRegistry {
  version: string;
  url: string;
}

async function answersSubjects(url: string): Promise<boolean> {
  const response = await fetch(`${url}/subjects`);
  return response.ok;
}

export async function startApicurioRegistry(runDir: RunDir, version: string): Promise<LocalRegistry> {
  const jar = await fetchApicurio(version);
  const port = await freePort();
  const jvm = [
    '-Xms64m',
    '-Xmx512m',
    '-XX:+UseSerialGC',
    `-Dquarkus.http.port=${port}`,
    '-Dquarkus.http.host=127.0.0.1',
    // The management interface would listen on 0.0.0.0:9000; readiness is probed on the API instead.
    '-Dquarkus.management.enabled=false',
    '-Dquarkus.log.level=WARN',
    // Subjects are deleted by tests that clean up after themselves.
    '-Dapicurio.rest.deletion.artifact.enabled=true',
    '-Dapicurio.rest.deletion.artifact-version.enabled=true',
    '-Dapicurio.rest.deletion.group.enabled=true',
  ];
  const service = await startService(runDir, `apicurio-${version}`, 'java', [...jvm, '-jar', jar]);
  const url = `http://127.0.0.1:${port}/apis/ccompat/v7`;
  await waitUntil(`Apicurio Registry ${version}`, () => answersSubjects(url), {
    timeoutMs: 120_000,
    ...service,
  });
  return { version, url };
}
