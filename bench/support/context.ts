// What every benchmark module gets from the orchestrator: the broker and registry started
// once, clients for them, a sandbox factory, the pipeline's configuration for a run, the
// size knobs, and a log line writer.
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { Kafka, logLevel } from 'kafkajs';
import type { Config, ConfigInput } from '../../src/config/index.ts';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../src/sandbox/index.ts';
import { ORGANIZATIONS, SEED } from './partners.ts';
import { uniqueName } from './topics.ts';

export interface BenchOptions {
  /** Multiplies record counts and durations (1 = the documented full run). */
  scale: number;
  /** Repetitions of each figure (median, min and max are reported). */
  runs: number;
}

export interface BenchContext extends BenchOptions {
  kafkaVersion: string;
  bootstrap: string;
  registryUrl: string;
  kafka: Kafka;
  registry: SchemaRegistry;
  /** The instant sandbox shared by the throughput benchmarks, warmed on first use. */
  instantSandbox(): Promise<RunningSandbox>;
  /** Closes what the context started (the shared sandbox). */
  close(): Promise<void>;
  /** Scaled count, at least `floor`. */
  count(full: number, floor?: number): number;
  log(line: string): void;
}

export function createContext(
  options: BenchOptions,
  infra: { kafkaVersion: string; bootstrap: string; registryUrl: string },
  instantSandbox: (context: BenchContext) => Promise<RunningSandbox>,
): BenchContext {
  let shared: Promise<RunningSandbox> | undefined;
  const context: BenchContext = {
    ...options,
    ...infra,
    instantSandbox: () => (shared ??= instantSandbox(context)),
    close: async () => {
      const sandbox = await shared?.catch(() => undefined);
      await sandbox?.close();
    },
    kafka: new Kafka({
      clientId: 'bench',
      brokers: [infra.bootstrap],
      logLevel: logLevel.ERROR,
      retry: { retries: 8, initialRetryTime: 100 },
    }),
    registry: new SchemaRegistry({ host: infra.registryUrl }),
    count: (full, floor = 1_000) => Math.max(floor, Math.round(full * options.scale)),
    log: (line) => console.log(`  ${line}`),
  };
  return context;
}

/** A sandbox over the organizations the benchmark records are about. */
export const benchSandbox = (options: SandboxOptions = {}): Promise<RunningSandbox> =>
  startSandbox({ port: 0, orgs: ORGANIZATIONS, seed: SEED, mode: 'instant', ...options });

/** Requests/s the benchmarks allow partner-enrich (why: see pipelineConfig). */
export const BENCH_REQUESTS_PER_SECOND = 1_000;

/**
 * The pipeline's configuration in the benchmarks: the defaults, except what points it at the
 * benchmark's broker, registry, sandbox and topics, and the request rate limit, whose default
 * (20 requests/s) protects a shared production service and would be what is measured.
 */
export function pipelineConfig(
  context: BenchContext,
  sandboxUrl: string,
  topics: Config['topics'],
  overrides: ConfigInput = {},
): ConfigInput {
  return {
    ...overrides,
    kafka: { brokers: [context.bootstrap], groupId: uniqueName('enrich'), ...overrides.kafka },
    schemaRegistry: { url: context.registryUrl },
    topics,
    refdata: { baseUrl: sandboxUrl, apiKey: 'sandbox-api-key', ...overrides.refdata },
    rateLimit: { requestsPerSecond: BENCH_REQUESTS_PER_SECOND, ...overrides.rateLimit },
    observability: { logLevel: 'silent', ...overrides.observability },
  };
}
