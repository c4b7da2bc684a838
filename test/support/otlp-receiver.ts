// An OTLP/HTTP trace receiver, as a collector would run one: it takes every export sent to
// /v1/traces, keeps the raw request, and decodes the JSON encoding into spans.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  status: { code?: number; message?: string };
  events: { name: string }[];
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** Root to configure as the endpoint; exports arrive at `${url}/v1/traces`. */
  url: string;
  requests: { path: string; contentType: string; body: Buffer }[];
  /** Spans of the JSON-encoded exports, in arrival order. */
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}

interface OtlpKeyValue {
  key: string;
  value: OtlpValue;
}

interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: {
      spans?: (Omit<ReceivedSpan, 'attributes' | 'resource' | 'links' | 'status' | 'events'> & {
        attributes?: OtlpKeyValue[];
        links?: { traceId: string; spanId: string }[];
        status?: ReceivedSpan['status'];
        events?: { name: string }[];
      })[];
    }[];
  }[];
}

function valueOf(value: OtlpValue): unknown {
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(valueOf);
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
}

const attributesOf = (list: OtlpKeyValue[] = []): Record<string, unknown> =>
  Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));

function decode(body: Buffer): ReceivedSpan[] {
  const exported = JSON.parse(body.toString('utf8')) as OtlpExport;
  return (exported.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        kind: span.kind,
        attributes: attributesOf(span.attributes),
        links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
        status: span.status ?? {},
        events: span.events ?? [],
        resource,
      })),
    );
  });
}

/**
 * `refuseWith`: answer every export with this HTTP status (a collector refusing the
 * credentials: 401), quoting the request's authorization header as some proxies do.
 */
export async function startOtlpReceiver({ refuseWith }: { refuseWith?: number } = {}): Promise<OtlpReceiver> {
  const requests: OtlpReceiver['requests'] = [];
  const spans: ReceivedSpan[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const contentType = request.headers['content-type'] ?? '';
      requests.push({ path: request.url ?? '', contentType, body });
      if (refuseWith !== undefined) {
        response.writeHead(refuseWith).end(`refused: ${request.headers.authorization ?? ''}`);
        return;
      }
      if (contentType.startsWith('application/json')) spans.push(...decode(body));
      // An empty ExportTraceServiceResponse: everything was accepted.
      response.writeHead(200, { 'content-type': contentType || 'application/json' });
      response.end(contentType.startsWith('application/json') ? '{}' : '');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
