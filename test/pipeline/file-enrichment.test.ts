// Per-partner semantics of the pipeline, on files and the sandbox: coalescing, skip-
// unchanged, lifecycle events and deletes, one MatchResult per input record.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFileEnrichment } from '../../src/cli/enrichment.ts';
import { loadConfig } from '../../src/config/index.ts';
import { RunSummary } from '../../src/pipeline/run-summary.ts';
import { generateDataset } from '../../src/sandbox/dataset/dataset.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { bulkAuditEntry, contentKey } from '../../src/sandbox/state/bulk-audit.ts';
import { partnerOf } from '../../src/sandbox/upstream-partners.ts';
import { toJsonRecord } from '../../src/mapping/lookup-task.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';

const dataset = generateDataset({ organizations: 500, seed: 5 });
const organization = (i: number) => dataset.organizations[i] as (typeof dataset.organizations)[number];

async function enrich(
  service: { url: string },
  lines: string[] | Buffer,
  maxTasks = 500,
  retry?: { maxAttempts: number; initialDelayMs: number; maxDelayMs: number },
  timeoutMs?: number,
  maxRecordBytes?: number,
) {
  const dir = await mkdtemp(join(tmpdir(), 'enrich-'));
  // A Buffer is the input file's exact bytes.
  await writeFile(join(dir, 'in.ndjson'), Buffer.isBuffer(lines) ? lines : `${lines.join('\n')}\n`);
  const config = loadConfig({
    env: {},
    overrides: {
      source: 'file',
      files: {
        input: join(dir, 'in.ndjson'),
        outputDir: join(dir, 'out'),
        ...(maxRecordBytes ? { maxRecordBytes } : {}),
      },
      refdata: { baseUrl: service.url, apiKey: 'sandbox-api-key', ...(timeoutMs ? { timeoutMs } : {}) },
      batching: { lingerMs: 20, maxTasks },
      polling: { initialDelayMs: 10, maxDelayMs: 100 },
      ...(retry ? { retry } : {}),
    },
  });
  const summary = new RunSummary();
  const enrichment = await createFileEnrichment(config, summary);
  await enrichment.pipeline.start();
  await enrichment.source.drained;
  await enrichment.pipeline.idle();
  await enrichment.stop(1_000);
  const read = async (name: string) =>
    (await readFile(join(dir, 'out', name), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    summary,
    matches: await read('matches.ndjson'),
    events: await read('events.ndjson'),
    storage: await read('storage.ndjson'),
    deadLetters: await read('dead-letters.ndjson'),
  };
}

const line = (partner: PartnerRecord) => JSON.stringify(partner);

/**
 * A fake front server before the sandbox. For each request `fault` says: 'time-out', answer
 * 408 as one that timed out waiting for the request does, without passing it on; a number,
 * pass it on and hold the sandbox's answer back that many milliseconds (a slow service); a
 * function, pass it on and answer what it makes of the sandbox's answer (a malformed answer);
 * or nothing, pass it on as it came.
 */
async function faultyGateway(
  target: string,
  fault: (method: string, path: string) => 'time-out' | number | ((answer: string) => string) | undefined,
) {
  const upstream = new URL(target);
  const server = createServer((incoming, outgoing) => {
    const chosen = fault(incoming.method ?? 'GET', incoming.url ?? '/');
    if (chosen === 'time-out') {
      incoming.resume();
      outgoing.writeHead(408, { 'content-type': 'application/json', connection: 'close' });
      outgoing.end(JSON.stringify({ code: 'REQUEST_TIMEOUT', message: 'request not received in time' }));
      return;
    }
    const { method, url: path, headers } = incoming;
    const forwarded = request(
      { host: upstream.hostname, port: upstream.port, method, path, headers },
      async (answer) => {
        if (typeof chosen !== 'function') {
          setTimeout(() => {
            outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(outgoing);
          }, chosen ?? 0);
          return;
        }
        const chunks: Buffer[] = [];
        for await (const chunk of answer) chunks.push(chunk as Buffer);
        const { 'content-length': _, ...rest } = answer.headers;
        outgoing.writeHead(answer.statusCode ?? 502, rest);
        outgoing.end(chosen(Buffer.concat(chunks).toString('utf8')));
      },
    );
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The bulk create and the reads of a bulk, as the gateway sees them. */
const BULKS = '/v4/businesspartners/lookup/bulks';
const isCreate = (method: string, path: string) => method === 'POST' && path === BULKS;
const isPoll = (method: string, path: string) => method === 'GET' && path.startsWith(`${BULKS}/`);

/** Two attempts per call and per record, short backoffs. */
const TWO_ATTEMPTS = { maxAttempts: 2, initialDelayMs: 10, maxDelayMs: 20 };

describe('the pipeline, per partner', () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, orgs: 500, seed: 5 });
  });
  afterAll(() => sandbox?.close());

  it('looks up versions that arrive while an older one is in a bulk once more, after it, with the newest content', async () => {
    const v1 = partnerOf(organization(1), 'A', 'ERP', 1);
    const resent = { ...v1, changedAt: 2, sourceSystem: 'CRM' };
    const v2 = { ...v1, names: [`${organization(1).name} Holding`], changedAt: 3 };
    const before = sandbox.state.stats.snapshot().bulkTasks;
    // One task per bulk: v1 is submitted at once, so the later versions wait behind it.
    const { matches, events, summary } = await enrich(sandbox, [line(v1), line(resent), line(v2)], 1);

    expect(matches.map((m) => m.source)).toEqual(
      [1, 2, 3].map((offset) => expect.objectContaining({ offset })),
    );
    expect(events.map((e) => e.type)).toEqual(['BusinessPartnerCreated', 'BusinessPartnerUpdated']);
    // v1 alone, then the re-send and v2 coalesced into one lookup of v2's content.
    expect(sandbox.state.stats.snapshot().bulkTasks - before).toBe(2);
    const asked = [...sandbox.state.bulks.all()].slice(-2).flatMap((bulk) => bulkAuditEntry(bulk).tasks);
    expect(asked.map((task) => task.contentKey)).toEqual([v1, v2].map((v) => contentKey(toJsonRecord(v))));
    expect(summary.quotaConsumed).toBe(2);
    expect(matches[0]?.outcome).toBe('MATCH');
  });

  it('folds versions that arrive while the first still waits in the batcher into one lookup', async () => {
    const v1 = partnerOf(organization(4), 'D', 'ERP', 1);
    const v2 = { ...v1, names: [`${organization(4).name} Group`], changedAt: 2 };
    const before = sandbox.state.stats.snapshot().bulkTasks;
    const { matches, events, summary } = await enrich(sandbox, [line(v1), line(v1), line(v2)]);

    expect(matches).toHaveLength(3);
    expect(events.map((e) => e.type)).toEqual(['BusinessPartnerCreated']);
    expect(sandbox.state.stats.snapshot().bulkTasks - before).toBe(1);
    expect(summary.quotaConsumed).toBe(1);
  });

  it('answers an unchanged re-send from the storage without a lookup and without an event', async () => {
    const partner = partnerOf(organization(2), 'B', 'ERP', 1);
    const unchanged = { ...partner, changedAt: 99 };
    const before = sandbox.state.stats.snapshot().bulkTasks;
    // The re-send waits behind the first version, then finds its content already stored.
    const { matches, events } = await enrich(sandbox, [line(partner), line(unchanged)], 1);

    expect(matches.map((m) => m.reused)).toEqual([false, true]);
    expect(matches[1]?.bestCandidate).toEqual(matches[0]?.bestCandidate);
    expect(events.map((e) => e.type)).toEqual(['BusinessPartnerCreated']);
    expect(sandbox.state.stats.snapshot().bulkTasks - before).toBe(1);
  });

  it('regression: a re-send with its identifiers in another order is not looked up again (an export without a fixed order paid a lookup whenever the order changed)', async () => {
    const org = organization(7);
    const country = org.address.country;
    const partner = {
      ...partnerOf(org, 'ORDER', 'ERP', 1),
      // The organization's register and VAT numbers, and a tax number the dataset does not know.
      identifiers: org.identifiers.map((id) => ({ type: id.type, value: id.value, country })),
      taxNumbers: [
        ...org.identifiers
          .filter((id) => id.kind === 'VAT')
          .map((id) => ({ type: id.type, value: id.value })),
        { type: 'DE_STEUERNUMMER', value: '143/815/08155' },
      ],
    };
    expect(partner.identifiers).toHaveLength(2);
    expect(partner.taxNumbers).toHaveLength(2);
    const reordered = [
      { ...partner, identifiers: partner.identifiers.toReversed(), changedAt: 2 },
      { ...partner, taxNumbers: partner.taxNumbers.toReversed(), changedAt: 3 },
    ];
    for (const resent of reordered) {
      const before = sandbox.state.stats.snapshot().bulkTasks;
      // The re-send waits behind the first version, then finds its content already stored.
      const { matches, events, summary } = await enrich(sandbox, [line(partner), line(resent)], 1);

      expect(matches.map((m) => m.reused)).toEqual([false, true]);
      expect(matches[1]?.bestCandidate).toEqual(matches[0]?.bestCandidate);
      expect(events.map((e) => e.type)).toEqual(['BusinessPartnerCreated']);
      expect(sandbox.state.stats.snapshot().bulkTasks - before).toBe(1);
      expect(summary.quotaConsumed).toBe(1);
    }
  });

  it('deletes a partner on a tombstone: Deleted event with its last svcId, storage tombstone', async () => {
    const partner = partnerOf(organization(3), 'C', 'ERP', 1);
    const { events, storage, matches } = await enrich(sandbox, [
      line(partner),
      JSON.stringify({ partnerId: 'C', deleted: true }),
    ]);

    expect(events.map((e) => e.type)).toEqual(['BusinessPartnerCreated', 'BusinessPartnerDeleted']);
    expect(events[1]?.svcId).toBe(events[0]?.svcId);
    expect(storage.at(-1)).toEqual({ partnerId: 'C', deleted: true });
    expect(matches.at(-1)).toEqual({ partnerId: 'C', deleted: true });
  });

  it('regression: a tombstone was counted in no outcome, so the records read outnumbered those finished (the summary rows did not add up)', async () => {
    const partner = partnerOf(organization(4), 'D', 'ERP', 1);
    const { summary } = await enrich(sandbox, [
      line(partner),
      JSON.stringify({ partnerId: 'D', deleted: true }),
    ]);

    expect(summary.recordsIn).toBe(2);
    expect(summary.outcomes.get('DELETED')).toBe(1);
    expect(summary.finished).toBe(summary.recordsIn);
  });

  it('regression: a tombstone for a partner never seen is dead-lettered (it emitted BusinessPartnerDeleted with svcId null)', async () => {
    const { events, deadLetters, matches } = await enrich(sandbox, [
      JSON.stringify({ partnerId: 'NEVER-SEEN', deleted: true }),
    ]);

    expect(events).toEqual([]);
    expect(matches).toEqual([]);
    expect(deadLetters).toHaveLength(1);
    expect(JSON.stringify(deadLetters[0])).toContain('DELETE_UNKNOWN_PARTNER');
  });

  it('regression: a bulk the service forgets right after creating it (restarted) is looked up anew, not dead-lettered as REFDATA_NOT_FOUND', async () => {
    const partners = [20, 21, 22].map((i) => partnerOf(organization(i), `GONE-${i}`, 'ERP', 1));
    // The sandbox forgets its first new bulk as a restart would, once the create's answer is on
    // its way: the pipeline's first read of it (sent at once) finds it gone.
    const store = sandbox.state.bulks;
    const create = store.create.bind(store);
    let forgotten = 0;
    store.create = (input) => {
      const bulk = create(input);
      if (forgotten === 0) {
        forgotten = bulk.tasks.length;
        setImmediate(() => store.clear());
      }
      return bulk;
    };
    try {
      const { matches, deadLetters } = await enrich(sandbox, partners.map(line));
      expect(forgotten).toBe(3);
      expect(deadLetters).toEqual([]);
      expect(matches.map((m) => m['partnerId'])).toEqual(partners.map((p) => p.partnerId));
      // Looked up once more, in one new bulk.
      expect([...store.all()].map((bulk) => bulk.tasks.length)).toEqual([3]);
    } finally {
      store.create = create;
    }
  });

  it('regression: a 408 on the bulk create dead-lettered the whole batch at once (a 408 was not processed: it is waited out, the bulk created under the quota consumed)', async () => {
    const partners = [40, 41, 42].map((i) => partnerOf(organization(i), `TIMEOUT-CREATE-${i}`, 'ERP', 1));
    // Every attempt of the client's first call: the pipeline has to call again.
    let creates = 0;
    const gateway = await faultyGateway(sandbox.url, (method, path) =>
      isCreate(method, path) && ++creates <= 2 ? 'time-out' : undefined,
    );
    const before = sandbox.state.stats.snapshot().bulkSubmissions;
    try {
      const { matches, deadLetters, summary } = await enrich(gateway, partners.map(line), 500, TWO_ATTEMPTS);
      expect(deadLetters).toEqual([]);
      expect(matches.map((m) => m['partnerId']).sort()).toEqual(partners.map((p) => p.partnerId));
      expect(creates).toBe(3);
      expect(sandbox.state.stats.snapshot().bulkSubmissions - before).toBe(1);
      expect(summary.quotaConsumed).toBe(3);
    } finally {
      await gateway.close();
    }
  });

  it('regression: a create answered after refdata.timeoutMs was made again by every retry, each bulk paid (a slow service: a bulk per attempt, without end); each retry after a time-out waits twice as long', async () => {
    const partners = [46, 47, 48].map((i) => partnerOf(organization(i), `SLOW-CREATE-${i}`, 'ERP', 1));
    // Every create's answer comes 1.5 s after the service made the bulk; the client waits 1 s.
    let creates = 0;
    const gateway = await faultyGateway(sandbox.url, (method, path) =>
      isCreate(method, path) ? (creates++, 1_500) : undefined,
    );
    const before = sandbox.state.stats.snapshot().bulkSubmissions;
    try {
      const { matches, deadLetters } = await enrich(gateway, partners.map(line), 500, TWO_ATTEMPTS, 1_000);
      expect(deadLetters).toEqual([]);
      expect(matches.map((m) => m['partnerId']).sort()).toEqual(partners.map((p) => p.partnerId));
      // The first attempt timed out after the bulk was made (paid twice: the window that stays);
      // the second waited 2 s and had its answer.
      expect(creates).toBe(2);
      expect(sandbox.state.stats.snapshot().bulkSubmissions - before).toBe(2);
    } finally {
      await gateway.close();
    }
  }, 30_000);

  it("regression: each 408 on a bulk's poll spent one of its records' retry.maxAttempts (a 408 was not processed: it is waited out)", async () => {
    const partners = [43, 44, 45].map((i) => partnerOf(organization(i), `TIMEOUT-POLL-${i}`, 'ERP', 1));
    // Every attempt of two calls: as many as a record has attempts.
    let polls = 0;
    const gateway = await faultyGateway(sandbox.url, (method, path) =>
      isPoll(method, path) && ++polls <= 4 ? 'time-out' : undefined,
    );
    const before = sandbox.state.stats.snapshot().bulkSubmissions;
    try {
      const { matches, deadLetters, summary } = await enrich(gateway, partners.map(line), 500, TWO_ATTEMPTS);
      expect(deadLetters).toEqual([]);
      expect(matches.map((m) => m['partnerId']).sort()).toEqual(partners.map((p) => p.partnerId));
      expect(polls).toBeGreaterThan(4);
      expect(sandbox.state.stats.snapshot().bulkSubmissions - before).toBe(1);
      expect(summary.quotaConsumed).toBe(3);
    } finally {
      await gateway.close();
    }
  });

  it('regression: a task result without a status was read as OK: its partner stored as NO_MATCH, the lookup lost without a trace (now dead-lettered TASK_STATUS_MISSING, the bulk not paid again)', async () => {
    const partners = [50, 51, 52].map((i) => partnerOf(organization(i), `NO-STATUS-${i}`, 'ERP', 1));
    // The finished bulk's first result is its task id alone: no status, no candidates.
    let stripped: string | undefined;
    const gateway = await faultyGateway(sandbox.url, (method, path) =>
      isPoll(method, path)
        ? (answer) => {
            const page = JSON.parse(answer) as { results?: { taskId: string }[] };
            const first = page.results?.[0];
            if (!first) return answer;
            stripped = first.taskId;
            page.results?.splice(0, 1, { taskId: first.taskId });
            return JSON.stringify(page);
          }
        : undefined,
    );
    const before = sandbox.state.stats.snapshot().bulkSubmissions;
    try {
      const { matches, deadLetters, summary } = await enrich(gateway, partners.map(line), 500, TWO_ATTEMPTS);
      expect(stripped).toBeDefined();
      expect(matches.map((m) => m['outcome']).sort()).toEqual(['FAILED', 'MATCH', 'MATCH']);
      expect(deadLetters).toHaveLength(1);
      expect(JSON.stringify(deadLetters[0])).toContain('TASK_STATUS_MISSING');
      expect(matches.find((m) => m['outcome'] === 'FAILED')?.['failureReason']).toMatch(
        /^TASK_STATUS_MISSING: /,
      );
      // Paid once: the answer is not asked for again in a new bulk.
      expect(sandbox.state.stats.snapshot().bulkSubmissions - before).toBe(1);
      expect(summary.quotaConsumed).toBe(3);
    } finally {
      await gateway.close();
    }
  });

  it('keeps every record: outputs or dead letters, none dropped, for a mix of good and bad lines', async () => {
    const good = Array.from({ length: 50 }, (_, i) =>
      line(partnerOf(organization(10 + i), `G-${i}`, 'ERP', i)),
    );
    const bad = [
      'not json',
      '{"partnerId":"X","sourceSystem":"S","changedAt":"soon"}',
      line({ ...partnerOf(organization(1), 'Y', 'E', 1), names: [], identifiers: [], taxNumbers: [] }),
    ];
    const { matches, deadLetters } = await enrich(sandbox, [...good, ...bad]);

    expect(matches).toHaveLength(50);
    expect(deadLetters.map((d) => (d.headers as Record<string, string>)['pe.error.code'])).toEqual([
      'DECODE_NOT_JSON',
      'DECODE_INVALID_FIELDS',
      'MAPPING_NO_NAME_OR_IDENTIFIER',
    ]);
    expect(deadLetters[0]?.value).toBe('not json');
  });

  it('regression: a UTF-8 byte order mark before the first line dead-lettered that record as DECODE_NOT_JSON', async () => {
    const partners = [60, 61].map((i) => partnerOf(organization(i), `BOM-${i}`, 'ERP', 1));
    // As Notepad or PowerShell save a UTF-8 file, with CRLF line ends.
    const bytes = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(`${partners.map(line).join('\r\n')}\r\n`),
    ]);
    const { matches, deadLetters, summary } = await enrich(sandbox, bytes);

    expect(deadLetters).toEqual([]);
    expect(matches.map((m) => m['partnerId'])).toEqual(['BOM-60', 'BOM-61']);
    expect(summary.recordsIn).toBe(2);
  });

  it('regression: a UTF-8 byte order mark at the start of a later line (files saved with one, concatenated) dead-lettered that record as DECODE_NOT_JSON, and a tombstone behind one was no tombstone; now each is read as without it', async () => {
    const partners = [64, 65].map((i) => partnerOf(organization(i), `BOM-${i}`, 'ERP', 1));
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const bytes = Buffer.concat([
      Buffer.from(`${line(partners[0] as PartnerRecord)}\n`),
      bom,
      Buffer.from(`${line(partners[1] as PartnerRecord)}\n`),
      bom,
      Buffer.from(`${JSON.stringify({ partnerId: 'BOM-64', deleted: true })}\n`),
    ]);
    const { matches, deadLetters, events, summary } = await enrich(sandbox, bytes);

    expect(deadLetters).toEqual([]);
    expect(matches.map((m) => m['partnerId'])).toEqual(['BOM-64', 'BOM-65', 'BOM-64']);
    expect(events.map((e) => `${e['type']} ${e['partnerId']}`).sort()).toEqual([
      'BusinessPartnerCreated BOM-64',
      'BusinessPartnerCreated BOM-65',
      'BusinessPartnerDeleted BOM-64',
    ]);
    expect(summary.outcomes.get('DELETED')).toBe(1);
  });

  it('regression: invalid UTF-8 in a line was read as U+FFFD and looked up (the original bytes lost), not dead-lettered DECODE_INVALID_UTF8', async () => {
    const partner = partnerOf(organization(62), 'LATIN1', 'ERP', 1);
    // The name as a Latin-1 file has it: 0xfc, a byte no UTF-8 text holds alone.
    const latin1 = Buffer.from(line({ ...partner, names: ['Müller Bau'] }), 'latin1');
    const good = partnerOf(organization(63), 'AFTER', 'ERP', 1);
    const { matches, deadLetters } = await enrich(
      sandbox,
      Buffer.concat([latin1, Buffer.from(`\n${line(good)}`)]),
    );

    expect(matches.map((m) => m['partnerId'])).toEqual(['AFTER']);
    expect(deadLetters).toHaveLength(1);
    const letter = deadLetters[0] as {
      value: string;
      valueEncoding: string;
      headers: Record<string, string>;
    };
    expect(letter.headers['pe.error.code']).toBe('DECODE_INVALID_UTF8');
    // The dead letter keeps the bytes as they were.
    expect(letter.valueEncoding).toBe('base64');
    expect(Buffer.from(letter.value, 'base64').equals(latin1)).toBe(true);
  });

  it('dead-letters a line over files.maxRecordBytes with its first KiB, cut between characters, and reads one of exactly the limit', async () => {
    const atLimit = line(partnerOf(organization(64), 'AT-LIMIT', 'ERP', 1));
    const limit = Buffer.byteLength(atLimit);
    // A two-byte character across the end of the KiB kept: the start keeps neither half.
    const head = '{"partnerId":"OVER","names":["';
    const kept = `${head}${'x'.repeat(1023 - head.length)}`;
    const over = `${kept}é${'y'.repeat(limit)}"]}`;
    // Blank or not, what a line over the limit holds is not looked at: it is a record.
    const spaces = ' '.repeat(limit + 1);
    const after = line(partnerOf(organization(65), 'AFTER', 'ERP', 1));
    const { matches, deadLetters, summary } = await enrich(
      sandbox,
      [atLimit, over, spaces, after],
      500,
      undefined,
      undefined,
      limit,
    );

    expect(matches.map((m) => m['partnerId'])).toEqual(['AT-LIMIT', 'AFTER']);
    const letters = deadLetters as {
      value: string;
      valueEncoding: string;
      headers: Record<string, string>;
    }[];
    expect(letters.map((d) => [d.headers['pe.error.code'], d.headers['pe.origin.offset']])).toEqual([
      ['FILE_RECORD_TOO_LARGE', '2'],
      ['FILE_RECORD_TOO_LARGE', '3'],
    ]);
    expect(letters.map((d) => [d.valueEncoding, d.value])).toEqual([
      ['utf8', kept],
      ['utf8', spaces],
    ]);
    expect(letters[0]?.headers['pe.error.message']).toContain(
      `is ${Buffer.byteLength(over)} bytes, over files.maxRecordBytes (${limit})`,
    );
    expect(summary.recordsIn).toBe(4);
    expect(summary.finished).toBe(4);
  });
});
