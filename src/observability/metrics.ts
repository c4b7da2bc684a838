// The pipeline's Prometheus metrics, in a registry of their own (not prom-client's global
// one) so that each pipeline instance, and each test, counts only its own work.
// Label values are closed lists or codes chosen by the pipeline (error codes, operation
// names, topic names): never URLs, headers, record content or anything a user typed.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { RERUN_RESULTS } from './events.ts';

export const METRIC_PREFIX = 'partner_enrich_';

export const RECORD_SOURCES = ['kafka', 'file'] as const;
export type RecordSource = (typeof RECORD_SOURCES)[number];

export const RECORD_OUTCOMES = [
  'MATCH',
  'MAYBE_MATCH',
  'NO_MATCH',
  'FAILED',
  'SKIPPED_UNCHANGED',
  'DELETED',
] as const;
export type RecordOutcome = (typeof RECORD_OUTCOMES)[number];

export const INTAKE_PAUSE_REASONS = ['quota', 'backpressure', 'schema-registry', 'restoring'] as const;
export type IntakePauseReason = (typeof INTAKE_PAUSE_REASONS)[number];

/** From a small bulk on the sandbox (well under a second) to a large one on a busy service. */
const BULK_LATENCY_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

export interface Metrics {
  registry: Registry;
  recordsIn: Counter<'source'>;
  recordsOut: Counter<'outcome'>;
  recordsRedelivered: Counter;
  recordsAdopted: Counter<'paid'>;
  deadLetters: Counter<'reason'>;
  /** Records of a multi-partition input not keyed by their partner id: `key` is `missing` or `other`. */
  recordsKeyNotPartnerId: Counter<'key'>;
  /** From a bulk's submission to its last result page. */
  bulkLatency: Histogram;
  bulkSubmissions: Counter;
  tasksInFlight: Gauge;
  /** Records taken from the source and not yet finished, as the intake counts them against its cap. */
  recordsInFlight: Gauge;
  /** Where recordsInFlight reads from, set once the pipeline exists. */
  readRecordsInFlight(read: () => number): void;
  /** Tasks consumed from the quota. */
  quotaConsumed: Counter;
  quotaOverLimit: Counter;
  /** 1 while intake is paused for any reason, else 0. */
  intakePaused: Gauge;
  intakePauses: Counter<'reason'>;
  consumerLag: Gauge<'topic' | 'partition'>;
  /** Storage topic records applied while restoring partner state, per input partition. */
  stateRestoreRecords: Counter<'topic' | 'partition'>;
  /** Seconds the partition's last (or current) restore took so far. */
  stateRestoreSeconds: Gauge<'topic' | 'partition'>;
  /** 1 while the partition's state is being restored, else 0. */
  stateRestoring: Gauge<'topic' | 'partition'>;
  /** Bytes on disk and partners of the partner state this replica holds. */
  stateStoreBytes: Gauge;
  statePartners: Gauge;
  /** Where the state gauges read from, set once the state exists. */
  readState(read: () => { bytes: number; partners: number }): void;
  /** 1 while the process is ready (what /readyz answers 200 for), else 0. */
  ready: Gauge;
  readReady(read: () => boolean): void;
  httpRequests: Counter<'operation' | 'status'>;
  retries: Counter<'reason'>;
  /** Stored partners a rerun finished on this replica, by result. */
  rerunPartners: Counter<'result'>;
  /** Part (0..1) of a running rerun's share of a partition done on this replica; gone once done. */
  rerunProgress: Gauge<'rerun' | 'partition'>;
  /** Tasks consumed from the quota for reruns (part of quota_consumed_total). */
  rerunQuotaConsumed: Counter;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });

  const counter = <Label extends string = never>(suffix: string, help: string, labelNames: Label[] = []) =>
    new Counter<Label>({ name: METRIC_PREFIX + suffix, help, labelNames, registers });
  const gauge = <Label extends string = never>(suffix: string, help: string, labelNames: Label[] = []) =>
    new Gauge<Label>({ name: METRIC_PREFIX + suffix, help, labelNames, registers });

  let readInFlight = () => 0;
  let readState = () => ({ bytes: 0, partners: 0 });
  let readReady = () => false;
  const metrics: Metrics = {
    registry,
    recordsIn: counter('records_in_total', 'Records read from the source.', ['source']),
    recordsOut: counter('records_out_total', 'Records written, by outcome.', ['outcome']),
    recordsRedelivered: counter(
      'records_redelivered_total',
      'Records read again (after a rebalance or a restart) whose outputs were written already: finished without writing them twice.',
    ),
    recordsAdopted: counter(
      'records_adopted_total',
      'Records under a submission intent whose submitter died (killed with their bulk under way), looked up here: paid="true" under the quota it consumed, "false" consuming it.',
      ['paid'],
    ),
    deadLetters: counter('dead_letters_total', 'Records sent to the dead-letter topic, by reason.', [
      'reason',
    ]),
    recordsKeyNotPartnerId: counter(
      'records_key_not_partner_id_total',
      'Records of a multi-partition input whose key is not their partner id (key="missing": no key; "other"): their partner\'s records can land on several partitions, each with a partner state of its own.',
      ['key'],
    ),
    bulkLatency: new Histogram({
      name: `${METRIC_PREFIX}bulk_latency_seconds`,
      help: 'Time from a bulk lookup submission to its complete results.',
      buckets: BULK_LATENCY_BUCKETS,
      registers,
    }),
    bulkSubmissions: counter('bulk_submissions_total', 'Bulk lookups submitted.'),
    tasksInFlight: gauge('tasks_in_flight', 'Lookup tasks submitted and not yet answered.'),
    recordsInFlight: new Gauge({
      name: `${METRIC_PREFIX}records_in_flight`,
      help: 'Records taken from the source and not yet finished (capped by batching.maxInFlightRecords).',
      registers,
      collect() {
        this.set(readInFlight());
      },
    }),
    readRecordsInFlight: (read) => void (readInFlight = read),
    quotaConsumed: counter('quota_consumed_total', 'Tasks consumed from the quota.'),
    quotaOverLimit: counter('quota_over_limit_total', 'Quota checks answered OVER_LIMIT.'),
    intakePaused: gauge(
      'intake_paused',
      '1 while intake is paused (quota, backpressure, schema registry, restoring), else 0.',
    ),
    intakePauses: counter('intake_pauses_total', 'Times intake was paused, by reason.', ['reason']),
    consumerLag: gauge('consumer_lag', 'Records between the committed offset and the end of the partition.', [
      'topic',
      'partition',
    ]),
    stateRestoreRecords: counter(
      'state_restore_records_total',
      'Storage topic records applied while restoring partner state, per input partition.',
      ['topic', 'partition'],
    ),
    stateRestoreSeconds: gauge(
      'state_restore_seconds',
      "Duration of the partition's last (or current) partner state restore.",
      ['topic', 'partition'],
    ),
    stateRestoring: gauge('state_restoring', "1 while the partition's partner state is being restored.", [
      'topic',
      'partition',
    ]),
    stateStoreBytes: new Gauge({
      name: `${METRIC_PREFIX}state_store_bytes`,
      help: 'Bytes on disk of the partner state of the partitions this replica holds.',
      registers,
      collect() {
        this.set(readState().bytes);
      },
    }),
    statePartners: new Gauge({
      name: `${METRIC_PREFIX}state_partners`,
      help: 'Partners stored in the partitions this replica holds.',
      registers,
      collect() {
        this.set(readState().partners);
      },
    }),
    readState: (read) => void (readState = read),
    ready: new Gauge({
      name: `${METRIC_PREFIX}ready`,
      help: '1 while the replica is ready (/readyz answers 200), else 0: alerting without the orchestrator.',
      registers,
      collect() {
        this.set(readReady() ? 1 : 0);
      },
    }),
    readReady: (read) => void (readReady = read),
    httpRequests: counter(
      'http_requests_total',
      'HTTP requests to the reference data service, by operation and status.',
      ['operation', 'status'],
    ),
    retries: counter('retries_total', 'Retried operations, by reason.', ['reason']),
    rerunPartners: counter('rerun_partners_total', 'Stored partners a rerun finished, by result.', [
      'result',
    ]),
    rerunProgress: gauge(
      'rerun_progress_ratio',
      "Part of a running rerun's share of an input partition done on this replica.",
      ['rerun', 'partition'],
    ),
    rerunQuotaConsumed: counter(
      'rerun_quota_consumed_total',
      'Tasks consumed from the quota for reruns (included in quota_consumed_total).',
    ),
  };

  // Known label values start at 0, so that rate() and absent() work before the first event.
  for (const source of RECORD_SOURCES) metrics.recordsIn.labels(source).inc(0);
  for (const outcome of RECORD_OUTCOMES) metrics.recordsOut.labels(outcome).inc(0);
  for (const reason of INTAKE_PAUSE_REASONS) metrics.intakePauses.labels(reason).inc(0);
  for (const result of RERUN_RESULTS) metrics.rerunPartners.labels(result).inc(0);
  return metrics;
}
