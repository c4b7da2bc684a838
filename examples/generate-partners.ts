// Writes examples/partners.ndjson, the demo's input: PartnerRecords an upstream system
// would publish about the sandbox dataset of `partner-enrich demo` (seed 42, 20,000
// organizations), some noisy, some unknown, some invalid, some re-sent or updated, and a
// few deletions. `npm run examples` regenerates it; the output is deterministic.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { generateDataset } from '../src/sandbox/dataset/dataset.ts';
import { ndjsonLine, upstreamPartners } from '../src/sandbox/upstream-partners.ts';

const SEED = 42;
const ORGANIZATIONS = 20_000;
const RECORDS = 3_000;

const dataset = generateDataset({ organizations: ORGANIZATIONS, seed: SEED });
const records = upstreamPartners(dataset, { count: RECORDS, seed: SEED });
const lines = records.map(ndjsonLine);
// Deletions of a few partners published earlier, as an upstream system sends them.
for (const record of records.filter((r) => r.kind === 'faithful').slice(0, 5)) {
  lines.push(JSON.stringify({ partnerId: record.partner?.partnerId, deleted: true }));
}
const target = fileURLToPath(new URL('partners.ndjson', import.meta.url));
await writeFile(target, `${lines.join('\n')}\n`);
const kinds = Object.groupBy(records, (r) => r.kind);
console.log(
  `wrote ${lines.length} lines to ${target}: ` +
    Object.entries(kinds)
      .map(([kind, list]) => `${list?.length} ${kind}`)
      .join(', '),
);
