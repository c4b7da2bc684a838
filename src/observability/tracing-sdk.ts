// The OpenTelemetry SDK behind tracing.ts, imported only when tracing is enabled: spans are
// batched to an OTLP/HTTP receiver, parents follow async calls (AsyncLocalStorage), W3C
// trace context goes in and out of headers, and the requests of the reference data client
// (undici) get HTTP client spans under the pipeline's own spans, carrying their traceparent.
//
// Kafka has no automatic instrumentation here: @opentelemetry/instrumentation-kafkajs would
// stamp each output with the context active when the sink sends its batch, which gathers the
// outputs of many records, so the outputs would lose their records' traces.
import { context, diag, DiagLogLevel, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { Config } from '../config/index.ts';
import type { Logger } from './logger.ts';
import { processSecrets } from './secret-redactor.ts';

export interface TracingSdk {
  /** Exports the spans still queued, then stops exporting. */
  shutdown(): Promise<void>;
}

/** `{endpoint}/v1/traces`, as OTEL_EXPORTER_OTLP_ENDPOINT is read by every OpenTelemetry SDK. */
export const tracesUrl = (endpoint: string): string => `${endpoint.replace(/\/+$/, '')}/v1/traces`;

/**
 * The values of the exporter's headers from the environment (`key=value` pairs, comma
 * separated, values URL-encoded): the collector's credentials. A collector or proxy that
 * quotes them in a refusal put them in the `tracing: ...` warnings.
 */
export function otlpHeaderValues(env: NodeJS.ProcessEnv = process.env): string[] {
  return [env.OTEL_EXPORTER_OTLP_HEADERS, env.OTEL_EXPORTER_OTLP_TRACES_HEADERS].flatMap((list) =>
    (list ?? '').split(',').flatMap((pair) => {
      const at = pair.indexOf('=');
      const value = at < 0 ? '' : pair.slice(at + 1).trim();
      if (value === '') return [];
      try {
        return [value, decodeURIComponent(value)];
      } catch {
        return [value];
      }
    }),
  );
}

export function startTracingSdk(options: Config['tracing'], logger: Logger): TracingSdk {
  for (const secret of otlpHeaderValues()) processSecrets.add(secret);
  // Export failures would otherwise go unseen: the SDK reports them only through diag.
  diag.setLogger(
    {
      error: (message) => logger.warn(`tracing: ${message}`),
      warn: (message) => logger.warn(`tracing: ${message}`),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    DiagLogLevel.WARN,
  );
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());

  const url = tracesUrl(options.endpoint);
  const exporter =
    options.protocol === 'http/json' ? new JsonExporter({ url }) : new ProtobufExporter({ url });
  const provider = new TracerProvider({
    // OTEL_RESOURCE_ATTRIBUTES (e.g. the pod's name and namespace) and the host name, under
    // the configured service name.
    resource: defaultResource()
      .merge(detectResources({ detectors: [envDetector, hostDetector] }))
      .merge(resourceFromAttributes({ 'service.name': options.serviceName })),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  trace.setGlobalTracerProvider(provider);
  // Subscribes to undici's diagnostics channels at once. Only requests made inside a pipeline
  // span get a span: none of the others is worth a trace of its own.
  const undici = new UndiciInstrumentation({ requireParentforSpans: true });

  return {
    async shutdown() {
      undici.disable();
      try {
        await provider.shutdown();
      } finally {
        // Also when the last export was refused: a start after it (a test's) registers anew.
        trace.disable();
        propagation.disable();
        context.disable();
        diag.disable();
      }
    },
  };
}
