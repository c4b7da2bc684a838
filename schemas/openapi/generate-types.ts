// Generates src/refdata/generated/reference-data.ts from reference-data.yaml with
// openapi-typescript, and the document's JSON copy (reference-data.json, which the processes
// read: no YAML parse at start) (`npm run generate:api`), or with --check (`npm run
// check:generated`) generates both into a temporary directory and fails when a committed file
// differs, so neither can drift from the document. Both modes share the generator flags below.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const repository = fileURLToPath(new URL('../../', import.meta.url));
const documentPath = 'schemas/openapi/reference-data.yaml';
const committedPath = 'src/refdata/generated/reference-data.ts';
const generator = join(repository, 'node_modules/.bin/openapi-typescript');
// A default is a server-side fill-in: the member stays optional in request types.
const generatorFlags = ['--default-non-nullable=false'];

const jsonPath = 'schemas/openapi/reference-data.json';

function generate(typesPath: string, documentJsonPath: string): void {
  execFileSync(generator, [documentPath, '--output', typesPath, ...generatorFlags], {
    cwd: repository,
    stdio: 'pipe',
  });
  const document: unknown = parse(readFileSync(join(repository, documentPath), 'utf8'));
  writeFileSync(documentJsonPath, `${JSON.stringify(document)}\n`);
}

if (process.argv.includes('--check')) {
  const workDirectory = mkdtempSync(join(tmpdir(), 'refdata-generated-'));
  try {
    const fresh = {
      [committedPath]: join(workDirectory, 'reference-data.ts'),
      [jsonPath]: join(workDirectory, 'reference-data.json'),
    };
    generate(fresh[committedPath] as string, fresh[jsonPath] as string);
    for (const [committed, freshPath] of Object.entries(fresh)) {
      if (readFileSync(freshPath, 'utf8') !== readFileSync(join(repository, committed), 'utf8')) {
        console.error(
          `${committed} is out of date with ${documentPath}: run \`npm run generate:api\` and commit it.`,
        );
        process.exitCode = 1;
      } else {
        console.log(`${committed} matches ${documentPath}.`);
      }
    }
  } finally {
    rmSync(workDirectory, { recursive: true, force: true });
  }
} else {
  generate(join(repository, committedPath), join(repository, jsonPath));
  console.log(`${committedPath} and ${jsonPath} generated from ${documentPath}.`);
}
