// A v4 bulk lookup's result page (spec item 14, the BulkLookup document) read straight from
// its bytes into what the outputs carry: per task its status, the candidates' identity, score,
// source and name, and the golden record's business partner as the JSON text the MatchResult
// holds (taken as the service wrote it, not parsed and written again). The candidates'
// business partner documents are stepped over, never built.
import type { Schemas } from '../refdata/index.ts';
import type { BulkCandidate, BulkPage, BulkTaskResult } from './bulk-api.ts';
import { JsonCursor } from './json-cursor.ts';

type Status = Schemas['BulkLookup']['status'];

const detailsText = (status: Status | null | undefined): string | undefined =>
  status?.details?.length ? JSON.stringify(status.details) : undefined;

/** Business partner members' inner fields are not shown in the spec; names[].value is the v3 shape. */
function firstName(names: unknown): string | undefined {
  const value = Array.isArray(names) ? (names[0] as { value?: unknown } | null)?.value : undefined;
  return typeof value === 'string' ? value.toWellFormed() : undefined;
}

function readCandidate(cursor: JsonCursor): BulkCandidate {
  let svcId = '';
  let score = 0;
  let dataSource: string | undefined;
  let name: string | undefined;
  cursor.object((key) => {
    if (key === 'svcId') svcId = cursor.string() ?? '';
    // A score of another type failed the Avro encoding of the outputs, an error without a code
    // that stopped the pipeline on the bulk at every restart: it fails the page instead.
    else if (key === 'score') score = cursor.number() ?? 0;
    else if (key === 'dataSource')
      cursor.object((field) =>
        field === 'aleiPrefix' ? (dataSource = cursor.string() ?? undefined) : cursor.skip(),
      );
    else if (key === 'businessPartner') {
      cursor.object((field) => (field === 'names' ? (name = firstName(cursor.value())) : cursor.skip()));
    } else cursor.skip();
  });
  // Members set one by one: spreads of optional members built two objects more per candidate.
  const candidate: BulkCandidate = { svcId, score };
  if (dataSource) candidate.dataSource = dataSource;
  if (name !== undefined) candidate.name = name;
  return candidate;
}

function readGoldenRecord(cursor: JsonCursor): BulkTaskResult['goldenRecord'] {
  let svcId: string | undefined;
  let json = '{}';
  cursor.object((key) => {
    if (key === 'svcId') svcId = cursor.string() ?? undefined;
    else if (key === 'businessPartner') {
      const text = cursor.raw();
      json = text === 'null' ? '{}' : text;
    } else cursor.skip();
  });
  return svcId ? { svcId, json } : undefined;
}

function readTaskResult(cursor: JsonCursor): BulkTaskResult {
  let taskId = '';
  let status: Status | null | undefined;
  const candidates: BulkCandidate[] = [];
  let goldenRecord: BulkTaskResult['goldenRecord'];
  cursor.object((key) => {
    if (key === 'taskId') taskId = cursor.string() ?? '';
    else if (key === 'status') status = cursor.value() as Status | null;
    // A member given twice counts as JSON.parse counts it: the last one.
    else if (key === 'values') {
      candidates.length = 0;
      cursor.array(() => candidates.push(readCandidate(cursor)));
    } else if (key === 'goldenRecord') goldenRecord = readGoldenRecord(cursor);
    else cursor.skip();
  });
  // A code of null is no more a status than none.
  const result: BulkTaskResult = { taskId, status: status?.code ?? undefined, candidates };
  const message = detailsText(status);
  if (message !== undefined) result.message = message;
  if (goldenRecord) result.goldenRecord = goldenRecord;
  return result;
}

/** Reads a result page from its bytes; throws a SyntaxError when they are not the JSON of an object. */
export function readBulkPage(body: Buffer): BulkPage {
  const cursor = new JsonCursor(body);
  if (!cursor.isObject()) throw new SyntaxError('JSON: expected an object at byte 0');
  let id = '';
  let status: Status | null | undefined;
  let progress = 0;
  let nextStartAfter: string | undefined;
  const results: BulkTaskResult[] = [];
  cursor.object((key) => {
    if (key === 'id') id = cursor.string() ?? '';
    else if (key === 'status') status = cursor.value() as Status | null;
    else if (key === 'progress') progress = (cursor.value() as number | null) ?? 0;
    else if (key === 'nextStartAfter') nextStartAfter = cursor.string() || undefined;
    else if (key === 'results') {
      results.length = 0;
      cursor.array(() => results.push(readTaskResult(cursor)));
    } else cursor.skip();
  });
  cursor.end();
  const page: BulkPage = { id, status: status?.code ?? 'RUNNING', progress, results };
  if (nextStartAfter) page.nextStartAfter = nextStartAfter;
  const message = detailsText(status);
  if (message !== undefined) page.message = message;
  return page;
}
