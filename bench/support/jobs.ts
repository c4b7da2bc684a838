// The measured side of a benchmark runs in a child process of its own (bench/support/worker.ts),
// so that its CPU time and RSS are its own and not the sandbox's or the load generator's.
import type { ConfigInput } from '../../src/config/index.ts';

interface KafkaEnds {
  brokers: string[];
  registryUrl: string;
  input: string;
  output: string;
  groupId: string;
}

export type WorkerJob =
  /** kafkajs consume -> Avro decode -> Avro encode -> produce, committed after each batch. */
  | ({ kind: 'raw'; count: number } & KafkaEnds)
  /** partner-enrich itself, built from the configuration as the CLI builds it. */
  | { kind: 'pipeline'; count: number; config: ConfigInput }
  /** The same, on an input whose length the parent tells later (a WorkerCommand `finish`). */
  | { kind: 'open-pipeline'; config: ConfigInput }
  /** One v4 lookup per record, `concurrency` at a time, results produced per fetched batch. */
  | ({ kind: 'naive'; count: number; concurrency: number; sandboxUrl: string } & KafkaEnds);

export interface WorkerResult {
  /** Records taken in and finished (outputs acknowledged by Kafka). */
  records: number;
  /** From the first record read to the last record's outputs acknowledged. */
  elapsedMs: number;
  recordsPerSecond: number;
  peakRssMb: number;
  details: Record<string, number>;
  /** RSS and heap along the run (the pipeline worker only). */
  memory?: { records: number; rssMb: number; heapUsedMb: number }[];
}

/** Parent to child, after the job: how many records the child's run is to finish. */
export interface WorkerCommand {
  type: 'finish';
  records: number;
}

export type WorkerMessage =
  { type: 'ready' } | { type: 'done'; result: WorkerResult } | { type: 'failed'; message: string };
