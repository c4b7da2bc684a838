import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RUNTIME_NODE_FLAGS } from '../../src/cli/runtime-flags.ts';

describe('the runtime memory flags', () => {
  it('are the flags on the shebang line of bin/partner-enrich.js', () => {
    const shebang = readFileSync(new URL('../../bin/partner-enrich.js', import.meta.url), 'utf8').split(
      '\n',
    )[0];
    expect(shebang).toBe(`#!/usr/bin/env -S node ${RUNTIME_NODE_FLAGS.join(' ')}`);
  });
});
