import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RUNTIME_SHEBANG } from '../../src/cli/runtime-flags.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('the runtime memory settings', () => {
  it('are the environment and node flags on the shebang line of bin/partner-enrich.js', () => {
    const shebang = read('bin/partner-enrich.js').split('\n')[0];
    expect(shebang).toBe(RUNTIME_SHEBANG);
    expect(shebang).toBe(
      '#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=262144 node --max-semi-space-size=4 --heap-growing-percent=10 --v8-pool-size=2',
    );
  });

  it(
    'regression: npm start ran the demo without them; it runs bin/partner-enrich.js, which carries them',
    { timeout: 60_000 },
    async () => {
      const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
      expect(scripts.start).toBe('bin/partner-enrich.js demo');
      const child = spawn('npm', ['start', '--silent', '--', '--help'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).toBe(0);
      expect(stdout).toMatch(/^Usage: partner-enrich demo/);
    },
  );
});
