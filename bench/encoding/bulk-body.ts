// Encoding a 500-task bulk create body (createBulkLookup, as the pipeline sends it) to the bytes
// of the request: JSON.stringify and the string's UTF-8 bytes (what a string body cost before)
// against jsonBytes (src/refdata/json-bytes.ts); the median time of one encoding each, and
// their ratio, for the benchmark's partners as they are and with one name beyond Latin-1 (which
// makes JSON.stringify's whole string two bytes per character). Run with the shipped flags:
// node --max-semi-space-size=4 --heap-growing-percent=10 --v8-pool-size=2 bench/encoding/bulk-body.ts
import { performance } from 'node:perf_hooks';
import { toJsonRecord } from '../../src/mapping/lookup-task.ts';
import { jsonBytes } from '../../src/refdata/json-bytes.ts';
import { upstream } from '../support/partners.ts';
import { spread } from '../support/stats.ts';

const TASKS = 500;
const WARM_UP = 300;
const ITERATIONS = 2_000;

function medianMs(encode: (body: unknown) => Buffer, body: unknown, expected: Buffer): number {
  for (let i = 0; i < WARM_UP; i++) encode(body);
  const times: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const start = performance.now();
    const bytes = encode(body);
    times.push(performance.now() - start);
    if (bytes.length !== expected.length) throw new Error('the encodings differ');
  }
  return spread(times).median;
}

const stringified = (body: unknown): Buffer => Buffer.from(JSON.stringify(body));

const partners = upstream(TASKS);
const bodyOf = (names: (name: string, i: number) => string) => ({
  featuresOn: ['ACTIVATE_DATASOURCE_EXTD'],
  matchingThreshold: 0.5,
  maxCandidates: 50,
  tasks: partners.map((partner, i) => ({
    id: partner.partnerId,
    businessPartner: {
      jsonRecord: toJsonRecord({ ...partner, names: partner.names.map((n) => names(n, i)) }),
    },
  })),
});

for (const [label, body] of [
  ['as generated', bodyOf((name) => name)],
  ['one name beyond Latin-1', bodyOf((name, i) => (i === TASKS / 2 ? `${name} Łódź` : name))],
] as const) {
  const expected = stringified(body);
  if (!jsonBytes(body).equals(expected)) throw new Error('jsonBytes differs from JSON.stringify');
  const before = medianMs(stringified, body, expected);
  const after = medianMs(jsonBytes, body, expected);
  console.log(
    `${label}: ${TASKS} tasks, ${expected.length} bytes; median of ${ITERATIONS} (after ${WARM_UP} warm-up)`,
  );
  console.log(`  JSON.stringify and its bytes: ${before.toFixed(3)} ms`);
  console.log(`  jsonBytes:                    ${after.toFixed(3)} ms`);
  console.log(`  ratio jsonBytes / stringify:  ${(after / before).toFixed(2)}x`);
}
