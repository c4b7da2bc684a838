import { describe, expect, it } from 'vitest';
import { configOptions, loadConfig, RENAMED_OPTIONS, type ConfigInput } from '../../src/config/index.ts';
import { API_KEY_ENV, configErrorOf, tempFile } from './helpers.ts';

describe('renamed options', () => {
  it('start with batching.maxBatchSize -> batching.maxTasks and refdata.url -> refdata.baseUrl', () => {
    expect(RENAMED_OPTIONS).toMatchObject({
      'batching.maxBatchSize': 'batching.maxTasks',
      'refdata.url': 'refdata.baseUrl',
    });
  });

  it('are rejected in a file with CONFIG_OPTION_RENAMED and a hint naming the new option', () => {
    const file = tempFile('old.yaml', 'batching:\n  maxBatchSize: 100\n');
    const error = configErrorOf(() => loadConfig({ file, env: API_KEY_ENV }), 'CONFIG_OPTION_RENAMED');
    expect(error.message).toContain(
      `batching.maxBatchSize was renamed to batching.maxTasks (in file ${file})`,
    );
    expect(error.details['renamed']).toEqual([
      { from: 'batching.maxBatchSize', to: 'batching.maxTasks', source: `file ${file}` },
    ]);
  });

  it('are rejected in the environment with a hint naming the new variable', () => {
    const error = configErrorOf(
      () => loadConfig({ env: { ...API_KEY_ENV, PARTNER_ENRICH_REFDATA__URL: 'http://refdata:8080' } }),
      'CONFIG_OPTION_RENAMED',
    );
    expect(error.message).toContain(
      'PARTNER_ENRICH_REFDATA__URL was renamed to PARTNER_ENRICH_REFDATA__BASE_URL',
    );
  });

  it('are rejected in the command-line flags', () => {
    const overrides = { refdata: { url: 'http://refdata:8080' } } as unknown as ConfigInput;
    const error = configErrorOf(() => loadConfig({ env: API_KEY_ENV, overrides }), 'CONFIG_OPTION_RENAMED');
    expect(error.message).toContain('refdata.url was renamed to refdata.baseUrl (in command-line flags)');
  });

  it('are all listed when several are in use', () => {
    const file = tempFile('old.json', JSON.stringify({ refdata: { url: 'http://refdata:8080' } }));
    const error = configErrorOf(
      () => loadConfig({ file, env: { ...API_KEY_ENV, PARTNER_ENRICH_BATCHING__MAX_BATCH_SIZE: '10' } }),
      'CONFIG_OPTION_RENAMED',
    );
    expect(error.details['renamed']).toHaveLength(2);
  });

  it('point from names that are no longer options to names that are', () => {
    const paths = configOptions.map((option) => option.path);
    for (const [from, to] of Object.entries(RENAMED_OPTIONS)) {
      expect(paths).not.toContain(from);
      expect(paths).toContain(to);
    }
  });
});
