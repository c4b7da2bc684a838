// A broker of a file's own with SASL and ACLs enforced (deploy/local/kafka-broker.ts, Secured),
// started before the file's tests and stopped after them, and an admin client logged in as its
// super user.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll } from 'vitest';
import { defaultInfrastructureOptions } from '../../deploy/local/infra.ts';
import { startRestartableKafkaBroker, type Secured } from '../../deploy/local/kafka-broker.ts';
import { createRunDir, stopProcess, type RunDir } from '../../deploy/local/processes.ts';

export interface SecuredBroker {
  /** Set once the broker answers (in beforeAll). */
  bootstrap: string;
  /** Logged in with SASL/PLAIN as `secured.admin`. */
  admin: Kafka;
}

export function securedBroker(prefix: string, secured: Secured): SecuredBroker {
  const broker = {} as SecuredBroker;
  let runDir: RunDir | undefined;
  beforeAll(async () => {
    runDir = await createRunDir(mkdtempSync(join(tmpdir(), `${prefix}-`)));
    const started = await startRestartableKafkaBroker(
      runDir,
      defaultInfrastructureOptions().kafkaVersions[0] as string,
      secured,
    );
    broker.bootstrap = started.bootstrap;
    broker.admin = new Kafka({
      brokers: [started.bootstrap],
      sasl: { mechanism: 'plain', ...secured.admin },
      logLevel: logLevel.NOTHING,
    });
  }, 180_000);
  afterAll(async () => {
    await Promise.all((runDir?.pids ?? []).map((pid) => stopProcess(pid, 5_000)));
    if (runDir) rmSync(runDir.path, { recursive: true, force: true });
  });
  return broker;
}
