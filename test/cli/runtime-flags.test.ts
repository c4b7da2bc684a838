import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RUNTIME_SHEBANG } from '../../src/cli/runtime-flags.ts';

describe('the runtime memory settings', () => {
  it('are the environment and node flags on the shebang line of bin/partner-enrich.js', () => {
    const shebang = readFileSync(new URL('../../bin/partner-enrich.js', import.meta.url), 'utf8').split(
      '\n',
    )[0];
    expect(shebang).toBe(RUNTIME_SHEBANG);
    expect(shebang).toBe(
      '#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=262144 node --max-semi-space-size=4 --heap-growing-percent=10 --v8-pool-size=2',
    );
  });
});
