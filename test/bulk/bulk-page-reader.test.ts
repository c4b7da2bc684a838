import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { readBulkPage } from '../../src/bulk/bulk-page-reader.ts';

const partner = (name: string) => ({
  names: [{ value: name }],
  identifiers: [{ value: 'SC643903', type: { technicalKey: 'GB_COMPANY_NUMBER' } }],
  addresses: [{ thoroughfares: [{ value: 'Queen Street', number: '54' }], country: { shortName: 'GB' } }],
  formattedErpRecord: { name1: name, city: 'Edinburgh' },
});

/** A page as the sandbox writes it: every field the outputs use, and documents they do not. */
const page = {
  id: 'bulk-1',
  createdAt: '2026-11-27T11:23:49.057Z',
  status: { code: 'FINISHED', technicalKey: 'FINISHED' },
  progress: 100,
  limit: 10,
  dataSources: [],
  results: [
    {
      taskId: 't0',
      status: { code: 'OK', technicalKey: 'OK' },
      values: [
        {
          svcId: 'OPENREG:GB-SC643903',
          dataSource: { aleiPrefix: 'OPENREG', name: 'Open company registers' },
          businessPartner: partner('Davis "Construction" Edinburgh Ltd \\ é'),
          score: 0.93,
        },
        { svcId: 'X:2', score: 0.61, businessPartner: { names: [] } },
      ],
      goldenRecord: { svcId: 'OPENREG:GB-SC643903', businessPartner: partner('Davis Construction') },
    },
    { taskId: 't1', status: { code: 'OK' }, values: [], goldenRecord: null },
    {
      taskId: 't2',
      status: { code: 'INVALID_INPUT', details: [{ field: 'jsonRecord', message: 'no name' }] },
      values: null,
    },
    { taskId: 't3', values: [{ svcId: 'Y:3', score: 0.7, dataSource: null, businessPartner: null }] },
    { taskId: 't4', status: { code: 'OK' }, values: [], goldenRecord: { svcId: 'G:4' } },
    { taskId: 't5', status: { code: null }, values: [] },
  ],
  nextStartAfter: 't5',
};

describe('readBulkPage', () => {
  const expected = {
    id: 'bulk-1',
    status: 'FINISHED',
    progress: 100,
    nextStartAfter: 't5',
    results: [
      {
        taskId: 't0',
        status: 'OK',
        candidates: [
          {
            svcId: 'OPENREG:GB-SC643903',
            score: 0.93,
            dataSource: 'OPENREG',
            name: 'Davis "Construction" Edinburgh Ltd \\ é',
          },
          { svcId: 'X:2', score: 0.61 },
        ],
        goldenRecord: {
          svcId: 'OPENREG:GB-SC643903',
          json: JSON.stringify(partner('Davis Construction')),
        },
      },
      { taskId: 't1', status: 'OK', candidates: [] },
      {
        taskId: 't2',
        status: 'INVALID_INPUT',
        message: JSON.stringify([{ field: 'jsonRecord', message: 'no name' }]),
        candidates: [],
      },
      // No status: not taken for OK (the pipeline dead-letters it as TASK_STATUS_MISSING).
      { taskId: 't3', status: undefined, candidates: [{ svcId: 'Y:3', score: 0.7 }] },
      { taskId: 't4', status: 'OK', candidates: [], goldenRecord: { svcId: 'G:4', json: '{}' } },
      { taskId: 't5', status: undefined, candidates: [] },
    ],
  };

  it("reads per task its status, the candidates' identity, score, source and name, and the golden record's text", () => {
    expect(readBulkPage(Buffer.from(JSON.stringify(page)))).toEqual(expected);
  });

  it("reads an indented page the same, the golden record's text as the service wrote it", () => {
    const read = readBulkPage(Buffer.from(JSON.stringify(page, null, 2)));
    expect({ ...read, results: read.results.map(({ goldenRecord: _, ...rest }) => rest) }).toEqual({
      ...expected,
      results: expected.results.map(({ goldenRecord: _, ...rest }) => rest),
    });
    const golden = read.results[0]?.goldenRecord;
    expect(golden?.svcId).toBe('OPENREG:GB-SC643903');
    expect(JSON.parse(golden?.json ?? '')).toEqual(partner('Davis Construction'));
  });

  it('regression: a golden record that is not JSON fails the page (its text reached MatchResults as it was)', () => {
    const whole = JSON.stringify(page);
    const at =
      whole.indexOf('"businessPartner":{', whole.indexOf('"goldenRecord"')) + '"businessPartner":{'.length;
    const text = `${whole.slice(0, at)}"broken" 01,${whole.slice(at)}`;
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    expect(() => readBulkPage(Buffer.from(text))).toThrow(SyntaxError);
  });

  it('regression: a candidate score that is not a number ("0.97", an object) was taken, and the Avro encoding of its outputs failed without a code, stopping the pipeline at every restart; it fails the page', () => {
    for (const score of ['"0.97"', '{"value":0.97}', 'true', '[0.97]']) {
      const text = `{"id":"b","status":{"code":"FINISHED"},"progress":100,"results":[{"taskId":"t","values":[{"svcId":"A:1","score":${score}}]}]}`;
      expect(() => readBulkPage(Buffer.from(text)), score).toThrow(/JSON: expected a number at byte \d+/);
    }
    const scored = (score: string) =>
      readBulkPage(
        Buffer.from(
          `{"id":"b","status":{"code":"FINISHED"},"progress":100,"results":[{"taskId":"t","values":[{"svcId":"A:1","score":${score}}]}]}`,
        ),
      ).results[0]?.candidates[0]?.score;
    expect(scored('0.97')).toBe(0.97);
    expect(scored('null')).toBe(0);
  });

  it("regression: an escaped lone surrogate in a candidate's svcId or name was kept, and the outputs' Avro encoding wrote it as bytes that are not UTF-8; now U+FFFD", () => {
    const text =
      '{"id":"b","status":{"code":"FINISHED"},"progress":100,"results":[{"taskId":"t","values":' +
      '[{"svcId":"X:\\ud800","score":0.9,"businessPartner":{"names":[{"value":"Caf\\udc00"}]}}]}]}';
    const [candidate] = readBulkPage(Buffer.from(text)).results[0]?.candidates ?? [];
    expect(candidate).toMatchObject({ svcId: 'X:\uFFFD', name: 'Caf\uFFFD' });
    expect(candidate?.svcId.isWellFormed()).toBe(true);
  });

  it('regression: a member given twice counts as JSON.parse counts it, the last one (results and candidates were merged)', () => {
    const text =
      '{"id":"b","status":{"code":"FINISHED"},"progress":100,' +
      '"results":[{"taskId":"old","values":[{"svcId":"A:1","score":0.9}]}],' +
      '"results":[{"taskId":"new","values":[{"svcId":"A:1","score":0.9}],"values":[{"svcId":"B:2","score":0.5}],' +
      '"goldenRecord":{"svcId":"B:2","businessPartner":{"a":1},"businessPartner":null}}]}';
    const { results } = readBulkPage(Buffer.from(text));
    const parsed = JSON.parse(text) as { results: { taskId: string; values: { svcId: string }[] }[] };
    expect(results.map((r) => r.taskId)).toEqual(parsed.results.map((r) => r.taskId));
    expect(results[0]?.candidates.map((c) => c.svcId)).toEqual(['B:2']);
    expect(results[0]?.goldenRecord).toEqual({ svcId: 'B:2', json: '{}' });
  });

  it('gives a running page without results when the service sent none yet', () => {
    expect(readBulkPage(Buffer.from('{"id":"b","status":{"code":"RUNNING"},"progress":40}'))).toEqual({
      id: 'b',
      status: 'RUNNING',
      progress: 40,
      results: [],
    });
  });

  it('regression: keeps no view into the page, which would hold each page while its results live', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // The heap and the buffers outside it: a view into a page's bytes would hold them there.
    const heapAfterGc = () => {
      gc();
      const { heapUsed, arrayBuffers } = process.memoryUsage();
      return heapUsed + arrayBuffers;
    };
    // Twenty pages of over 1 MB each (a member the reader steps over), their results kept.
    const kept: unknown[] = [];
    const before = heapAfterGc();
    for (let i = 0; i < 20; i += 1) {
      kept.push(
        readBulkPage(
          Buffer.from(JSON.stringify({ ...page, id: `bulk-${i}`, padding: 'x'.repeat(1_000_000 + i) })),
        ),
      );
    }
    const held = heapAfterGc() - before;
    expect(kept).toHaveLength(20);
    expect(held).toBeLessThan(5_000_000);
  });

  it.each([
    ['an empty body', ''],
    ['null', 'null'],
    ['an array', '[]'],
    ['a page cut short', JSON.stringify(page).slice(0, 500)],
  ])('refuses %s', (_, text) => {
    expect(() => readBulkPage(Buffer.from(text))).toThrow(SyntaxError);
  });
});
