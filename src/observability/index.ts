// The observability module's public surface.
export { createLogger, type Logger, type LoggerOptions, type LogLevel } from './logger.ts';
export { LOG_CENSOR, redactedLogPaths } from './log-redaction.ts';
export {
  createMetrics,
  METRIC_PREFIX,
  INTAKE_PAUSE_REASONS,
  RECORD_OUTCOMES,
  RECORD_SOURCES,
  type IntakePauseReason,
  type Metrics,
  type RecordOutcome,
  type RecordSource,
} from './metrics.ts';
export {
  CHANNEL_NAMES,
  pipelineEvents,
  type BulkEvent,
  type EventChannel,
  type HttpEvent,
  type IntakeEvent,
  type LagEvent,
  type QuotaEvent,
  type RecordsEvent,
  type RetryEvent,
} from './events.ts';
export { subscribeMetrics } from './metrics-subscriber.ts';
export { OBSERVABILITY_ERROR_CODES, ObservabilityError, type ObservabilityErrorCode } from './errors.ts';
export {
  startHealthServer,
  type HealthServer,
  type HealthServerOptions,
  type Readiness,
} from './health-server.ts';
export { startTracing, SPAN_KINDS, TRACER_NAME, type SpanName } from './tracing.ts';
