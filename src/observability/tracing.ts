// OpenTelemetry spans at the pipeline's seams, through @opentelemetry/api only. Until
// startTracing() has started the SDK (tracing.enabled), every helper returns at its first
// line: no span, no context lookup, no traceparent header, and the SDK is never imported.
//
// A record's trace: its consume span continues the traceparent of the input record and stays
// open until the record's outputs are durable; the produce span is its child, and its context
// goes into the output records' traceparent header. A bulk serves records of many traces, so
// its spans (quota check, bulk submit, bulk poll, bulk page read, under one bulk lookup span)
// form a trace of their own, linked both ways with the consume spans of its records.
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Link,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { redactUrl, type Config } from '../config/index.ts';
import { finishedWithin } from '../finished-within.ts';
import type { OutputMessage } from '../pipeline/outputs.ts';
import type { InputRecord, PartnerWork, RecordHeaders } from '../pipeline/records.ts';
import type { Logger } from './logger.ts';

export const TRACER_NAME = 'partner-enrich';

/** Every span the pipeline makes, with its kind (docs/OBSERVABILITY.md lists them). */
export const SPAN_KINDS = {
  consume: SpanKind.CONSUMER,
  'bulk lookup': SpanKind.INTERNAL,
  'quota check': SpanKind.INTERNAL,
  'bulk submit': SpanKind.CLIENT,
  'bulk poll': SpanKind.CLIENT,
  'bulk page read': SpanKind.CLIENT,
  produce: SpanKind.PRODUCER,
} as const;

export type SpanName = keyof typeof SPAN_KINDS;

/** The longest a stop waits for the last spans to reach the collector. */
const FLUSH_BUDGET_MS = 3_000;

let enabled = false;
/** Taken from each SDK as it starts: a tracer keeps the provider it first delegated to. */
let tracer: Tracer = trace.getTracer(TRACER_NAME);
/** Consume spans of records in the pipeline: ended when their outputs are durable. */
const consumeSpans = new WeakMap<InputRecord, Span>();

/**
 * Starts the SDK when tracing is enabled (imported only then, to keep `run`'s start light);
 * resolves with the function that flushes the spans not yet exported and stops it.
 */
export async function startTracing(options: Config['tracing'], logger: Logger): Promise<() => Promise<void>> {
  if (!options.enabled) return async () => {};
  const { startTracingSdk } = await import('./tracing-sdk.ts');
  const sdk = startTracingSdk(options, logger);
  tracer = trace.getTracer(TRACER_NAME);
  enabled = true;
  logger.info(
    { endpoint: redactUrl(options.endpoint), protocol: options.protocol },
    'tracing: exporting spans',
  );
  return async () => {
    enabled = false;
    // A collector that refuses the last export (401, 413...) rejects the shutdown: thrown, it
    // turned every stop of `run` into an unexpected failure, exit 1. Tracing never stops the
    // pipeline, its stop included.
    await finishedWithin(sdk.shutdown(), FLUSH_BUDGET_MS).catch((error: unknown) => {
      logger.warn({ err: error }, 'tracing: last spans not exported');
    });
  };
}

/**
 * Offers a record inside its consume span, which continues the trace of its traceparent header.
 * A record not taken is offered again later: its span is dropped unended, so never exported.
 */
export function traceConsume(record: InputRecord, groupId: string, offer: () => boolean): boolean {
  if (!enabled) return offer();
  const { topic, partition, offset } = record.position;
  const span = tracer.startSpan(
    'consume',
    {
      kind: SPAN_KINDS.consume,
      attributes: {
        'messaging.system': 'kafka',
        'messaging.operation.type': 'process',
        'messaging.destination.name': topic,
        'messaging.destination.partition.id': String(partition),
        'messaging.kafka.offset': offset,
        'messaging.consumer.group.name': groupId,
      },
    },
    propagation.extract(ROOT_CONTEXT, record.headers),
  );
  consumeSpans.set(record, span);
  const taken = offer();
  if (!taken) consumeSpans.delete(record);
  return taken;
}

/** Runs a bulk's lookup in its bulk lookup span, linked with the consume spans of its records. */
export function traceBulkLookup(
  batch: Pick<PartnerWork, 'records' | 'rerun'>[],
  lookup: () => Promise<void>,
): Promise<void> {
  if (!enabled) return lookup();
  const consumes = batch.flatMap((work) => spansOf(work.records.map((record) => record.input)));
  const rerunId = batch[0]?.rerun?.jobId;
  const span = tracer.startSpan(
    'bulk lookup',
    {
      kind: SPAN_KINDS['bulk lookup'],
      links: consumes.map(linkTo),
      attributes: {
        'partner_enrich.bulk.works': batch.length,
        ...(rerunId ? { 'partner_enrich.rerun.id': rerunId } : {}),
      },
    },
    // Explicitly a root: the active context may be one a timer or a callback carried over
    // from an earlier bulk.
    ROOT_CONTEXT,
  );
  for (const consume of consumes) consume.addLink(linkTo(span));
  return context.with(trace.setSpan(ROOT_CONTEXT, span), lookup).finally(() => span.end());
}

/**
 * Runs `work` in a span, a child of the active one; `describe` adds what the result tells.
 * The span ends when `work` settles, marked as an error when it rejects.
 */
export function traced<T>(
  name: SpanName,
  attributes: Attributes,
  work: () => Promise<T>,
  describe?: (result: T) => Attributes,
): Promise<T> {
  if (!enabled) return work();
  return tracer.startActiveSpan(name, { kind: SPAN_KINDS[name], attributes }, async (span) => {
    try {
      const result = await work();
      if (describe) span.setAttributes(describe(result));
      return result;
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Notes something that happened in the active span (e.g. an OVER_LIMIT answer). */
export function traceEvent(name: string, attributes?: Attributes): void {
  if (enabled) trace.getActiveSpan()?.addEvent(name, attributes);
}

/**
 * Writes a piece of work's outputs in a produce span, a child of the consume span of the newest
 * input (the one a coalesced task was built from; the others are linked). The sink adds the
 * span's traceparent to every output (withTraceHeaders). `write` calls `durable` once the
 * outputs are durable, which ends the produce span and the inputs' consume spans.
 */
export function traceProduce(
  messages: OutputMessage[],
  inputs: InputRecord[],
  write: (durable: () => void) => void,
): void {
  if (!enabled) return write(() => {});
  const consumes = spansOf(inputs);
  const newest = consumes.at(-1);
  // A rerun's work has no consume span: its outputs continue the bulk's trace.
  const parent = newest ? trace.setSpan(ROOT_CONTEXT, newest) : context.active();
  const span = tracer.startSpan(
    'produce',
    {
      kind: SPAN_KINDS.produce,
      links: consumes.slice(0, -1).map(linkTo),
      attributes: {
        'messaging.system': 'kafka',
        'messaging.operation.type': 'send',
        'messaging.batch.message_count': messages.length,
        'partner_enrich.outputs': [...new Set(messages.map((message) => message.output))],
      },
    },
    parent,
  );
  const deadLetter = messages.find((message) => message.output === 'deadLetters');
  const code = deadLetter?.headers?.['pe.error.code'];
  context.with(trace.setSpan(parent, span), () =>
    write(() => {
      span.end();
      for (const consume of consumes) {
        if (code) consume.setStatus({ code: SpanStatusCode.ERROR, message: `dead letter: ${code}` });
        consume.end();
      }
      for (const input of inputs) consumeSpans.delete(input);
    }),
  );
}

/** `headers` with the active span's traceparent (and tracestate) added, when there is one. */
export function withTraceHeaders<Headers extends RecordHeaders>(
  headers: Headers | undefined,
): Headers | undefined {
  if (!enabled) return headers;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length === 0 ? headers : ({ ...headers, ...carrier } as Headers);
}

function spansOf(inputs: InputRecord[]): Span[] {
  return inputs.map((input) => consumeSpans.get(input)).filter((span) => span !== undefined);
}

const linkTo = (span: Span): Link => ({ context: span.spanContext() });

function failed(span: Span, error: unknown): void {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') span.setAttribute('error.type', code);
  if (error instanceof Error) span.recordException(error);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}
