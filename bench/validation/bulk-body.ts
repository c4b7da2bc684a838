// Validating a 500-task bulk create body (createBulkLookup, as the pipeline sends it) with the
// old hand-written validator and with ajv: the median time of one validation each, and their
// ratio. Each validator is compiled once, before timing. Run: node bench/validation/bulk-body.ts
import { performance } from 'node:perf_hooks';
import { toJsonRecord } from '../../src/mapping/lookup-task.ts';
import { loadReferenceDataDocument } from '../../src/refdata/openapi-document.ts';
import { schemaCompilerFor } from '../../src/refdata/schema-validation.ts';
import { upstream } from '../support/partners.ts';
import { spread } from '../support/stats.ts';
import { SchemaCompiler as OldSchemaCompiler } from './old-json-schema-subset.ts';

const TASKS = 500;
const WARM_UP = 300;
const ITERATIONS = 3_000;

type Validate = (value: unknown, field: string) => readonly unknown[];

function medianMs(validate: Validate, body: unknown): number {
  for (let i = 0; i < WARM_UP; i++) validate(body, 'body');
  const times: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const start = performance.now();
    const issues = validate(body, 'body');
    times.push(performance.now() - start);
    if (issues.length > 0) throw new Error(`the bulk body is invalid: ${JSON.stringify(issues[0])}`);
  }
  return spread(times).median;
}

const document = loadReferenceDataDocument();
const schema = document.operations.get('createBulkLookup')?.requestBody?.schema;
const body = {
  featuresOn: ['ACTIVATE_DATASOURCE_EXTD'],
  matchingThreshold: 0.5,
  maxCandidates: 50,
  tasks: upstream(TASKS).map((partner) => ({
    id: partner.partnerId,
    businessPartner: { jsonRecord: toJsonRecord(partner) },
  })),
};

const old = medianMs(new OldSchemaCompiler(document.resolveRef).compile(schema), body);
const ajv = medianMs(schemaCompilerFor(document).compile(schema), body);
console.log(`bulk body: ${TASKS} tasks, ${JSON.stringify(body).length} bytes of JSON`);
console.log(`median of ${ITERATIONS} validations each (after ${WARM_UP} warm-up)`);
console.log(`old validator: ${old.toFixed(3)} ms`);
console.log(`ajv:           ${ajv.toFixed(3)} ms`);
console.log(`ratio:         ${(old / ajv).toFixed(1)}x`);
