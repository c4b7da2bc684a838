// Brokers of a test file's own (deploy/local/kafka-broker.ts), for what the suite's shared
// broker cannot show: several nodes, SASL and ACLs. Started before the file's tests in a run
// directory of their own; after them, every process started there is stopped and the directory
// removed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type RetryOptions } from 'kafkajs';
import { afterAll, beforeAll } from 'vitest';
import { defaultInfrastructureOptions } from '../../deploy/local/infra.ts';
import { startKafkaCluster, type LocalCluster } from '../../deploy/local/kafka-broker.ts';
import { createRunDir, stopProcess, type RunDir } from '../../deploy/local/processes.ts';

/** Registers the file's hooks around `start`, given the run directory and the Kafka version. */
export function ownBrokers(prefix: string, start: (runDir: RunDir, version: string) => Promise<void>): void {
  let runDir: RunDir | undefined;
  beforeAll(async () => {
    runDir = await createRunDir(mkdtempSync(join(tmpdir(), `${prefix}-`)));
    await start(runDir, defaultInfrastructureOptions().kafkaVersions[0] as string);
  }, 180_000);
  afterAll(async () => {
    await Promise.all((runDir?.pids ?? []).map((pid) => stopProcess(pid, 5_000)));
    if (runDir) rmSync(runDir.path, { recursive: true, force: true });
  });
}

export interface OwnCluster {
  /** Set once every node answers (in beforeAll). */
  cluster: LocalCluster;
  /** A silent client of the whole cluster. */
  kafka: Kafka;
}

/** A three-node cluster (startKafkaCluster: one node down leaves every partition writable). */
export function threeNodeCluster(prefix: string, retry?: RetryOptions): OwnCluster {
  const own = {} as OwnCluster;
  ownBrokers(prefix, async (runDir, version) => {
    own.cluster = await startKafkaCluster(runDir, version, 3);
    own.kafka = new Kafka({
      brokers: own.cluster.bootstrap.split(','),
      logLevel: logLevel.NOTHING,
      ...(retry ? { retry } : {}),
    });
  });
  return own;
}
