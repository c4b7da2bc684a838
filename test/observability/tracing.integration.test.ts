// Tracing as an operator turns it on: `partner-enrich run` as a separate process against the
// real broker, registry and sandbox, exporting to an OTLP/HTTP receiver. Input records carry a
// W3C traceparent; their outputs must carry the same trace, and every span kind must arrive.
// Off (the default), the process loads no OpenTelemetry SDK and writes no trace header.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import type { KafkaMessage } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/index.ts';
import { generateDataset } from '../../src/sandbox/dataset/dataset.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { upstreamPartners } from '../../src/sandbox/upstream-partners.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { cliEnv, startCli } from '../support/cli.ts';
import { createTopicsFor, partnerEncoder, readAll, testTopics } from '../support/enrichment.ts';
import { kafkaClient, uniqueName } from '../support/kafka.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';
import { deleteSubject, schemaRegistry } from '../support/schema-registry.ts';

const MODULE_LOG_HOOK = fileURLToPath(new URL('../support/module-log.ts', import.meta.url));
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

interface Upstream {
  partner: PartnerRecord;
  traceId: string;
  spanId: string;
}

const traceparentOf = (message: KafkaMessage): string | undefined => message.headers?.traceparent?.toString();

describe('partner-enrich run with tracing', () => {
  const kafka = kafkaClient();
  const topicSets: Config['topics'][] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const children: ChildProcess[] = [];
  let sandbox: RunningSandbox;
  let receiver: OtlpReceiver;
  let partners: PartnerRecord[];
  let moduleLogs: string;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, orgs: 2_000, seed: 15 });
    receiver = await startOtlpReceiver();
    partners = upstreamPartners(generateDataset({ organizations: 2_000, seed: 15 }), {
      count: 6,
      seed: 15,
      invalid: 0,
      resent: 0,
      updated: 0,
    }).map((r) => r.partner as PartnerRecord);
    moduleLogs = mkdtempSync(join(tmpdir(), 'partner-enrich-modules-'));
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    for (const cleanup of cleanups) await cleanup();
    for (const topics of topicSets)
      for (const t of [topics.input, topics.matches, topics.events, topics.storage])
        await deleteSubject(`${t}-value`);
    await receiver?.close();
    await sandbox?.close();
    rmSync(moduleLogs, { recursive: true, force: true });
  });

  /** Input records with a traceparent each, read by `run` with `env` until every match is out. */
  async function runOn(env: NodeJS.ProcessEnv) {
    const topics = testTopics('tracing');
    topicSets.push(topics);
    cleanups.push(await createTopicsFor(kafka, topics));
    const upstream: Upstream[] = partners.map((partner) => ({ partner, traceId: hex(16), spanId: hex(8) }));
    const encode = await partnerEncoder(schemaRegistry(), topics.input);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({
      topic: topics.input,
      acks: -1,
      messages: await Promise.all(
        upstream.map(async ({ partner, traceId, spanId }) => ({
          key: partner.partnerId,
          value: await encode(partner),
          headers: { traceparent: `00-${traceId}-${spanId}-01` },
        })),
      ),
    });
    await producer.disconnect();

    const moduleLog = join(moduleLogs, `${uniqueName('run')}.log`);
    const child = startCli(['run'], {
      ...cliEnv(sandbox.url, topics, uniqueName('group')),
      // One bulk for all records, and its results over several pages.
      PARTNER_ENRICH_BATCHING__LINGER_MS: '1000',
      PARTNER_ENRICH_POLLING__PAGE_SIZE: '1',
      NODE_OPTIONS: `--import=${MODULE_LOG_HOOK}`,
      TEST_MODULE_LOG: moduleLog,
      ...env,
    });
    children.push(child);
    let logs = '';
    child.stdout?.on('data', (chunk: Buffer) => (logs += chunk));
    child.stderr?.on('data', (chunk: Buffer) => (logs += chunk));
    const exited = once(child, 'exit');

    // Metadata of a topic this young can still be settling (NOT_LEADER): read again later.
    const readMatches = () =>
      readAll(kafka, topics.matches).catch((error: unknown) => {
        if ((error as { retriable?: boolean }).retriable) return [];
        throw error;
      });
    const deadline = Date.now() + 90_000;
    let matches = await readMatches();
    while (matches.length < upstream.length) {
      if (Date.now() > deadline || child.exitCode !== null)
        throw new Error(`${matches.length} of ${upstream.length} matches written:\n${logs}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      matches = await readMatches();
    }
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code, logs).toBe(0);

    const outputs = [
      ...matches,
      ...(await readAll(kafka, topics.events)),
      ...(await readAll(kafka, topics.storage)),
    ];
    let loaded: string[] = [];
    try {
      loaded = readFileSync(moduleLog, 'utf8').split('\n').filter(Boolean);
    } catch {
      // Nothing of OpenTelemetry was resolved, so the hook never wrote.
    }
    const packages = [...new Set(loaded.map((url) => /\/@opentelemetry\/([^/]+)\//.exec(url)?.[1]))];
    return { topics, upstream, outputs, packages, logs };
  }

  it('continues each input trace through consume and produce into the outputs, with the bulk spans linked', async () => {
    const { topics, upstream, outputs, packages } = await runOn({
      PARTNER_ENRICH_TRACING__ENABLED: 'true',
      PARTNER_ENRICH_TRACING__PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'partner-enrich-traced',
    });
    expect(packages).toContain('sdk-trace');
    const spans = receiver.spans.filter((span) => span.resource['service.name'] === 'partner-enrich-traced');
    const byName = (name: string) => spans.filter((span) => span.name === name);
    const byId = new Map(spans.map((span) => [span.spanId, span]));

    const consumes = new Map<string, ReceivedSpan>();
    for (const { partner, traceId, spanId } of upstream) {
      const [consume, ...again] = byName('consume').filter((span) => span.traceId === traceId);
      expect(again, partner.partnerId).toEqual([]);
      expect(consume, partner.partnerId).toMatchObject({ parentSpanId: spanId, kind: 5 });
      expect(consume?.attributes).toMatchObject({
        'messaging.system': 'kafka',
        'messaging.destination.name': topics.input,
      });
      consumes.set(partner.partnerId, consume as ReceivedSpan);

      // Every output of the partner (match, event, storage) carries its produce span.
      const produce = byName('produce').find((span) => span.traceId === traceId);
      expect(produce, partner.partnerId).toMatchObject({ parentSpanId: consume?.spanId, kind: 4 });
      const written = outputs.filter((message) => message.key?.toString() === partner.partnerId);
      expect(written.length, partner.partnerId).toBeGreaterThanOrEqual(3);
      for (const message of written)
        expect(traceparentOf(message)).toBe(`00-${traceId}-${produce?.spanId}-01`);
    }

    // The bulk's trace: its spans under bulk lookup, which links every record it served.
    const bulks = byName('bulk lookup');
    expect(bulks.length).toBeGreaterThan(0);
    const linked = bulks.flatMap((bulk) => bulk.links.map((link) => link.spanId));
    for (const consume of consumes.values()) expect(linked).toContain(consume.spanId);
    const bulkIds = new Set(bulks.map((bulk) => bulk.spanId));
    for (const name of ['quota check', 'bulk submit', 'bulk poll', 'bulk page read']) {
      expect(byName(name).length, name).toBeGreaterThan(0);
      for (const span of byName(name)) expect(bulkIds.has(span.parentSpanId), name).toBe(true);
    }
    expect(byName('bulk page read').length).toBeGreaterThanOrEqual(upstream.length - bulks.length);

    // undici's instrumentation: the service calls as HTTP client spans under the pipeline's.
    const http = spans.filter(
      (span) => span.kind === 3 && span.attributes['http.request.method'] !== undefined,
    );
    const parents = new Set(http.map((span) => byId.get(span.parentSpanId)?.name));
    expect(parents).toContain('bulk submit');
    expect(parents).toContain('bulk page read');
    expect(parents).toContain('quota check');
  });

  it("with delivery exactly-once, the outputs committed in transactions carry their records' traces", async () => {
    const { upstream, outputs } = await runOn({
      PARTNER_ENRICH_DELIVERY: 'exactly-once',
      PARTNER_ENRICH_TRACING__ENABLED: 'true',
      PARTNER_ENRICH_TRACING__PROTOCOL: 'http/json',
      PARTNER_ENRICH_TRACING__ENDPOINT: receiver.url,
      PARTNER_ENRICH_TRACING__SERVICE_NAME: 'partner-enrich-transactional',
    });
    const spans = receiver.spans.filter(
      (span) => span.resource['service.name'] === 'partner-enrich-transactional',
    );
    for (const { partner, traceId, spanId } of upstream) {
      const consume = spans.find((span) => span.name === 'consume' && span.traceId === traceId);
      expect(consume, partner.partnerId).toMatchObject({ parentSpanId: spanId });
      const produce = spans.find((span) => span.name === 'produce' && span.traceId === traceId);
      expect(produce, partner.partnerId).toMatchObject({ parentSpanId: consume?.spanId });
      const written = outputs.filter((message) => message.key?.toString() === partner.partnerId);
      expect(written.length, partner.partnerId).toBeGreaterThanOrEqual(3);
      for (const message of written)
        expect(traceparentOf(message)).toBe(`00-${traceId}-${produce?.spanId}-01`);
    }
  });

  it('is off by default: no OpenTelemetry SDK is loaded, no span exported, no traceparent written', async () => {
    const before = receiver.requests.length;
    // An endpoint alone does not turn tracing on.
    const { outputs, packages } = await runOn({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    expect(packages).toEqual(['api']);
    expect(receiver.requests.length).toBe(before);
    expect(outputs.length).toBeGreaterThanOrEqual(partners.length * 3);
    expect(outputs.filter((message) => traceparentOf(message) !== undefined)).toEqual([]);
  });
});
