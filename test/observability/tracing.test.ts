// The tracing helpers with the real OpenTelemetry SDK exporting over HTTP to a receiver in
// this process. The whole pipeline with tracing is in tracing.integration.test.ts.
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PartnerEnrichError } from '../../src/errors.ts';
import { createLogger } from '../../src/observability/index.ts';
import {
  startTracing,
  traceBulkLookup,
  traceConsume,
  traced,
  traceProduce,
  withTraceHeaders,
} from '../../src/observability/tracing.ts';
import { tracesUrl } from '../../src/observability/tracing-sdk.ts';
import type { OutputMessage } from '../../src/pipeline/outputs.ts';
import type { InputRecord, RecordHeaders } from '../../src/pipeline/records.ts';
import { capturedLogger } from '../support/captured-log.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';

const logger = createLogger({ level: 'silent' });
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

function inputRecord(traceparent: string): InputRecord {
  return {
    position: { topic: 'partners', partition: 2, offset: 41 },
    key: Buffer.from('P-1'),
    value: Buffer.from('{}'),
    headers: { traceparent },
    timestamp: 0,
  };
}

const matchResult: OutputMessage = { output: 'matches', key: 'P-1', value: {} };

/** One record through consume, a bulk and produce; resolves with the headers its output got. */
async function throughPipeline(record: InputRecord): Promise<RecordHeaders | undefined> {
  expect(traceConsume(record, 'enrich', () => true)).toBe(true);
  await traceBulkLookup([{ records: [{ input: record }] }], async () => {
    await traced(
      'quota check',
      {},
      async () => 1,
      (granted) => ({ 'partner_enrich.quota.granted': granted }),
    );
    await traced('bulk submit', { 'partner_enrich.bulk.tasks': 1 }, async () => 'bulk-1');
    const unavailable = new PartnerEnrichError('REFDATA_SERVER_ERROR', 'service unavailable', {
      canRetry: true,
    });
    await expect(
      traced('bulk poll', { 'partner_enrich.bulk.id': 'bulk-1' }, () => Promise.reject(unavailable)),
    ).rejects.toBe(unavailable);
  });
  let headers: RecordHeaders | undefined;
  traceProduce([matchResult], [record], (durable) => {
    headers = withTraceHeaders(matchResult.headers);
    durable();
  });
  return headers;
}

const named = (spans: ReceivedSpan[], name: string): ReceivedSpan[] =>
  spans.filter((span) => span.name === name);

function only(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = named(spans, name);
  expect(found, name).toHaveLength(1);
  return found[0] as ReceivedSpan;
}

describe('tracing', () => {
  let receiver: OtlpReceiver;
  beforeEach(async () => {
    receiver = await startOtlpReceiver();
  });
  afterEach(async () => {
    await receiver.close();
  });

  it('continues the input trace in the consume span and hands the produce span to the outputs', async () => {
    const traceId = hex(16);
    const upstreamSpanId = hex(8);
    const stop = await startTracing(
      {
        enabled: true,
        serviceName: 'enrich-eu',
        endpoint: receiver.url,
        protocol: 'http/json',
        sampleRatio: 1,
      },
      logger,
    );
    const headers = await throughPipeline(inputRecord(`00-${traceId}-${upstreamSpanId}-01`));
    await stop();

    expect(receiver.requests.map((r) => [r.path, r.contentType])).toContainEqual([
      '/v1/traces',
      'application/json',
    ]);
    const { spans } = receiver;
    const consume = only(spans, 'consume');
    expect(consume).toMatchObject({ traceId, parentSpanId: upstreamSpanId, kind: 5 });
    expect(consume.attributes).toMatchObject({
      'messaging.system': 'kafka',
      'messaging.destination.name': 'partners',
      'messaging.destination.partition.id': '2',
      'messaging.kafka.offset': 41,
      'messaging.consumer.group.name': 'enrich',
    });
    const produce = only(spans, 'produce');
    expect(produce).toMatchObject({ traceId, parentSpanId: consume.spanId, kind: 4 });
    expect(produce.attributes).toMatchObject({ 'partner_enrich.outputs': ['matches'] });
    expect(headers).toEqual({ traceparent: `00-${traceId}-${produce.spanId}-01` });

    // The bulk is a trace of its own, linked with the record's consume span both ways.
    const bulk = only(spans, 'bulk lookup');
    expect(bulk.parentSpanId).toBe('');
    expect(bulk.traceId).not.toBe(traceId);
    expect(bulk.links).toEqual([{ traceId, spanId: consume.spanId }]);
    expect(consume.links).toEqual([{ traceId: bulk.traceId, spanId: bulk.spanId }]);
    for (const name of ['quota check', 'bulk submit', 'bulk poll'])
      expect(only(spans, name), name).toMatchObject({ traceId: bulk.traceId, parentSpanId: bulk.spanId });
    expect(only(spans, 'quota check').attributes).toMatchObject({ 'partner_enrich.quota.granted': 1 });
    const poll = only(spans, 'bulk poll');
    expect(poll.status).toMatchObject({ code: 2, message: 'service unavailable' });
    expect(poll.attributes).toMatchObject({ 'error.type': 'REFDATA_SERVER_ERROR' });
    expect(consume.resource).toMatchObject({ 'service.name': 'enrich-eu' });
  });

  it('follows an unsampled input: nothing of its trace is exported, and the outputs say so too', async () => {
    const traceId = hex(16);
    const stop = await startTracing(
      { enabled: true, serviceName: 'enrich', endpoint: receiver.url, protocol: 'http/json', sampleRatio: 1 },
      logger,
    );
    const headers = await throughPipeline(inputRecord(`00-${traceId}-${hex(8)}-00`));
    await stop();

    expect(headers?.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    expect(receiver.spans.filter((span) => span.traceId === traceId)).toEqual([]);
    // The bulk's own trace starts here and is sampled at sampleRatio 1.
    expect(named(receiver.spans, 'bulk lookup')).toHaveLength(1);
  });

  it('exports binary protobuf, the OTLP default, to {endpoint}/v1/traces', async () => {
    const stop = await startTracing(
      {
        enabled: true,
        serviceName: 'enrich-proto',
        endpoint: `${receiver.url}/`,
        protocol: 'http/protobuf',
        sampleRatio: 1,
      },
      logger,
    );
    await throughPipeline(inputRecord(`00-${hex(16)}-${hex(8)}-01`));
    await stop();

    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const request of receiver.requests) {
      expect(request.path).toBe('/v1/traces');
      expect(request.contentType).toBe('application/x-protobuf');
    }
    // Protobuf keeps strings as they are: the names are readable in the bytes.
    const body = Buffer.concat(receiver.requests.map((request) => request.body));
    for (const text of ['enrich-proto', 'consume', 'bulk submit', 'produce'])
      expect(body.includes(text), text).toBe(true);
  });

  it('marks the consume span of a dead-lettered record as an error with the code', async () => {
    const stop = await startTracing(
      { enabled: true, serviceName: 'enrich', endpoint: receiver.url, protocol: 'http/json', sampleRatio: 1 },
      logger,
    );
    const record = inputRecord(`00-${hex(16)}-${hex(8)}-01`);
    traceConsume(record, 'enrich', () => true);
    const letter: OutputMessage = {
      output: 'deadLetters',
      key: 'P-1',
      value: Buffer.from('{}'),
      headers: { 'pe.stage': 'decode', 'pe.error.code': 'DECODE_FAILED' },
    };
    let headers: RecordHeaders | undefined;
    traceProduce([letter], [record], (durable) => {
      headers = withTraceHeaders(letter.headers);
      durable();
    });
    await stop();

    expect(only(receiver.spans, 'consume').status).toEqual({
      code: 2,
      message: 'dead letter: DECODE_FAILED',
    });
    expect(headers).toMatchObject({ 'pe.error.code': 'DECODE_FAILED', traceparent: expect.any(String) });
  });

  /** A pipeline's spans exported to a collector that refuses every export (401); what the stop and the log made of it. */
  async function tracedToRefusingCollector() {
    const refusing = await startOtlpReceiver({ refuseWith: 401 });
    const log = capturedLogger('warn');
    try {
      const stop = await startTracing(
        {
          enabled: true,
          serviceName: 'enrich',
          endpoint: refusing.url,
          protocol: 'http/json',
          sampleRatio: 1,
        },
        log.logger,
      );
      await throughPipeline(inputRecord(`00-${hex(16)}-${hex(8)}-01`));
      const stopped = await stop().then(
        () => 'resolved',
        (error: unknown) => error,
      );
      return { stopped, exports: refusing.requests.length, ...log };
    } finally {
      await refusing.close();
    }
  }

  it("regression: a collector refusing the last export (401) made the stop reject, and `run`'s SIGTERM exit 1; now the stop resolves with a warning", async () => {
    const { stopped, exports, lines } = await tracedToRefusingCollector();
    expect(stopped).toBe('resolved');
    expect(exports).toBeGreaterThan(0);
    expect(lines().map((line) => line.msg)).toContain('tracing: last spans not exported');
  });

  it("regression: the collector's credentials (OTEL_EXPORTER_OTLP_HEADERS) quoted in its refusal reached the log; now they are redacted", async () => {
    vi.stubEnv('OTEL_EXPORTER_OTLP_HEADERS', 'Authorization=Bearer%20otlp-token-4711,X-Tenant=eu');
    try {
      const { text } = await tracedToRefusingCollector();
      expect(text()).toContain('refused: ');
      expect(text()).not.toContain('otlp-token-4711');
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('writes no header and makes no span while it is not started', async () => {
    const record = inputRecord(`00-${hex(16)}-${hex(8)}-01`);
    const headers = await throughPipeline(record);
    expect(headers).toBeUndefined();
    expect(receiver.requests).toEqual([]);
  });

  it('sends to {endpoint}/v1/traces whether or not the endpoint ends with a slash', () => {
    expect(tracesUrl('http://collector:4318')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('http://collector:4318/otlp/')).toBe('http://collector:4318/otlp/v1/traces');
  });
});
