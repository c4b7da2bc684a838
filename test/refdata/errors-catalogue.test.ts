import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REFDATA_ERROR_CODES } from '../../src/refdata/index.ts';

const doc = readFileSync(new URL('../../docs/REFDATA-CLIENT.md', import.meta.url), 'utf8');

describe('the error code catalogue in docs/REFDATA-CLIENT.md', () => {
  it('lists exactly the codes the client can raise', () => {
    const catalogued = [...doc.matchAll(/^\| `(REFDATA_[A-Z_]+)`\s*\|/gm)].map((match) => match[1]);
    expect(catalogued.sort()).toEqual([...REFDATA_ERROR_CODES].sort());
  });
});
