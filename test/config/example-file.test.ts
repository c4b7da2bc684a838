import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { API_KEY_ENV } from './helpers.ts';

const EXAMPLE = fileURLToPath(new URL('../../examples/partner-enrich.config.json', import.meta.url));

describe('examples/partner-enrich.config.json', () => {
  it('is valid once the API key comes from the environment, where credentials belong', () => {
    const config = loadConfig({ file: EXAMPLE, env: API_KEY_ENV });
    expect(config.source).toBe('kafka');
    expect(config.refdata.apiKey).toBe(API_KEY_ENV.PARTNER_ENRICH_REFDATA__API_KEY);
  });
});
