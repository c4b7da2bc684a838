// Generates src/refdata/generated/reference-data.ts from reference-data.yaml with
// openapi-typescript (`npm run generate:api`), or with --check (`npm run check:generated`)
// regenerates into a temporary file and fails when the committed file differs, so the
// committed types cannot drift from the document. Both modes share the generator flags below.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repository = fileURLToPath(new URL('../../', import.meta.url));
const documentPath = 'schemas/openapi/reference-data.yaml';
const committedPath = 'src/refdata/generated/reference-data.ts';
const generator = join(repository, 'node_modules/.bin/openapi-typescript');
// A default is a server-side fill-in: the member stays optional in request types.
const generatorFlags = ['--default-non-nullable=false'];

function generate(outputPath: string): void {
  execFileSync(generator, [documentPath, '--output', outputPath, ...generatorFlags], {
    cwd: repository,
    stdio: 'pipe',
  });
}

if (process.argv.includes('--check')) {
  const workDirectory = mkdtempSync(join(tmpdir(), 'refdata-generated-'));
  try {
    const freshPath = join(workDirectory, 'reference-data.ts');
    generate(freshPath);
    if (readFileSync(freshPath, 'utf8') !== readFileSync(join(repository, committedPath), 'utf8')) {
      console.error(
        `${committedPath} is out of date with ${documentPath}: run \`npm run generate:api\` and commit it.`,
      );
      process.exitCode = 1;
    } else {
      console.log(`${committedPath} matches ${documentPath}.`);
    }
  } finally {
    rmSync(workDirectory, { recursive: true, force: true });
  }
} else {
  generate(join(repository, committedPath));
  console.log(`${committedPath} generated from ${documentPath}.`);
}
