// The machine a run was measured on, written next to every result.
import { spawnSync } from 'node:child_process';
import { cpus, release, totalmem } from 'node:os';

export interface Machine {
  cpu: string;
  cores: number;
  memoryGb: number;
  os: string;
  node: string;
  java: string;
  /** The broker's version; `none` when the run started no broker (matching alone). */
  kafka: string;
}

/** First line of `java -version` (which writes to standard error). */
function javaVersion(): string {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  return `${result.stderr ?? ''}${result.stdout ?? ''}`.split('\n')[0]?.trim() || 'unknown';
}

export function describeMachine(kafkaVersion: string): Machine {
  const cores = cpus();
  return {
    cpu: cores[0]?.model ?? 'unknown',
    cores: cores.length,
    memoryGb: Math.round(totalmem() / 1024 ** 3),
    os: `${process.platform} ${release()}`,
    node: process.version,
    java: javaVersion(),
    kafka: kafkaVersion,
  };
}
