import { describe, expect, it } from 'vitest';
import { configOrigins, loadConfig } from '../../src/config/index.ts';
import { API_KEY_ENV, configErrorOf, problemPaths, tempFile } from './helpers.ts';

const yamlFile = () =>
  tempFile(
    'partner-enrich.yaml',
    ['batching:', '  maxTasks: 100', '  lingerMs: 50', 'topics:', '  input: from-file', ''].join('\n'),
  );

describe('configuration sources', () => {
  it('reads a YAML file given as file', () => {
    const config = loadConfig({ file: yamlFile(), env: API_KEY_ENV });
    expect(config.batching.maxTasks).toBe(100);
    expect(config.topics.input).toBe('from-file');
  });

  it('reads a JSON file', () => {
    const file = tempFile(
      'partner-enrich.json',
      JSON.stringify({ source: 'file', files: { input: 'in.ndjson' } }),
    );
    const config = loadConfig({ file, env: API_KEY_ENV });
    expect(config.source).toBe('file');
    expect(config.files.input).toBe('in.ndjson');
  });

  it('regression: a number quoted in a file is refused as text (it was told to write decimal digits, which it did)', () => {
    const file = tempFile('quoted.json', JSON.stringify({ batching: { maxTasks: '100', lingerMs: '0x10' } }));
    const error = configErrorOf(() => loadConfig({ file, env: API_KEY_ENV }), 'CONFIG_INVALID');
    expect(error.message).toContain(
      'batching.maxTasks: Invalid input: expected a number, not text (a number in quotes)',
    );
    expect(error.message).toContain(
      'batching.lingerMs: Invalid input: expected a whole number in decimal digits',
    );
  });

  it('reads the file named by PARTNER_ENRICH_CONFIG when no file is given', () => {
    const config = loadConfig({ env: { ...API_KEY_ENV, PARTNER_ENRICH_CONFIG: yamlFile() } });
    expect(config.batching.maxTasks).toBe(100);
  });

  it('prefers the file given explicitly (--config) over PARTNER_ENRICH_CONFIG', () => {
    const other = tempFile('other.json', JSON.stringify({ batching: { maxTasks: 7 } }));
    const config = loadConfig({ file: other, env: { ...API_KEY_ENV, PARTNER_ENRICH_CONFIG: yamlFile() } });
    expect(config.batching.maxTasks).toBe(7);
  });

  it('treats a file holding only comments as an empty configuration', () => {
    const file = tempFile('empty.yaml', '# nothing set yet\n');
    expect(loadConfig({ file, env: API_KEY_ENV }).batching.maxTasks).toBe(500);
  });

  it('ranks defaults < file < environment < overrides, option by option', () => {
    const config = loadConfig({
      file: yamlFile(),
      env: {
        ...API_KEY_ENV,
        PARTNER_ENRICH_BATCHING__MAX_TASKS: '200',
        PARTNER_ENRICH_TOPICS__INPUT: 'from-env',
      },
      overrides: { topics: { input: 'from-overrides' } },
    });
    expect(config.batching).toMatchObject({ maxTasks: 200, lingerMs: 50, maxConcurrentBulks: 4 });
    expect(config.topics.input).toBe('from-overrides');
  });

  it('leaves lower sources alone where an override is undefined (a CLI flag not given)', () => {
    const config = loadConfig({
      file: yamlFile(),
      env: API_KEY_ENV,
      overrides: { topics: { input: undefined } },
    });
    expect(config.topics.input).toBe('from-file');
  });

  it('replaces a list from a lower source instead of extending it', () => {
    const file = tempFile('brokers.json', JSON.stringify({ kafka: { brokers: ['a:9092', 'b:9092'] } }));
    const config = loadConfig({ file, env: { ...API_KEY_ENV, PARTNER_ENRICH_KAFKA__BROKERS: 'c:9092' } });
    expect(config.kafka.brokers).toEqual(['c:9092']);
  });

  it('names the file that set an invalid value', () => {
    const file = tempFile('bad.json', JSON.stringify({ batching: { maxTasks: 0 } }));
    const error = configErrorOf(() => loadConfig({ file, env: API_KEY_ENV }), 'CONFIG_INVALID');
    expect(error.message).toContain(`batching.maxTasks: Too small`);
    expect(error.message).toContain(`(from file ${file})`);
  });

  it('names the override that set an invalid value', () => {
    const error = configErrorOf(
      () => loadConfig({ env: API_KEY_ENV, overrides: { observability: { metricsPort: 70_000 } } }),
      'CONFIG_INVALID',
    );
    expect(error.message).toContain('observability.metricsPort: Too big');
    expect(error.message).toContain('(from command-line flags)');
  });
});

describe('where each option set comes from (config check --origins)', () => {
  it('names the source of the value in force: flags over the environment over the file; a list is one option', () => {
    const file = tempFile(
      'origins.yaml',
      ['kafka:', '  brokers: [a:9092, b:9092]', 'batching:', '  maxTasks: 100', '  lingerMs: 50', ''].join(
        '\n',
      ),
    );
    const origins = configOrigins({
      file,
      env: {
        ...API_KEY_ENV,
        PARTNER_ENRICH_BATCHING__MAX_TASKS: '200',
        PARTNER_ENRICH_BATCHING__LINGER_MS: '60',
      },
      overrides: { batching: { lingerMs: 70 } },
    });
    expect(origins).toEqual([
      { path: 'batching.lingerMs', source: 'command-line flags' },
      { path: 'batching.maxTasks', source: 'environment variable PARTNER_ENRICH_BATCHING__MAX_TASKS' },
      { path: 'kafka.brokers', source: `file ${file}` },
      {
        path: 'refdata.apiKey',
        source: expect.stringContaining('environment variable PARTNER_ENRICH_REFDATA__API_KEY'),
      },
    ]);
  });
});

describe('configuration file errors', () => {
  it('rejects a missing file with CONFIG_FILE_UNREADABLE naming the file and the reason', () => {
    const error = configErrorOf(
      () => loadConfig({ file: '/nonexistent/partner-enrich.yaml', env: API_KEY_ENV }),
      'CONFIG_FILE_UNREADABLE',
    );
    expect(error.details).toMatchObject({ file: '/nonexistent/partner-enrich.yaml', reason: 'ENOENT' });
  });

  it('rejects malformed JSON with its line and column, without quoting the file', () => {
    const file = tempFile('broken.json', '{\n  "refdata": { "apiKey": "s3cr3t-in-broken-file" \n');
    const error = configErrorOf(() => loadConfig({ file, env: {} }), 'CONFIG_FILE_UNREADABLE');
    expect(error.message).toMatch(/not valid JSON or YAML at line \d+, column \d+/);
    expect(error.message).not.toContain('s3cr3t-in-broken-file');
    expect(JSON.stringify(error.details)).not.toContain('s3cr3t-in-broken-file');
  });

  it('rejects malformed YAML with CONFIG_FILE_UNREADABLE', () => {
    const file = tempFile('broken.yaml', 'kafka:\n  brokers: [a:9092\n');
    configErrorOf(() => loadConfig({ file, env: API_KEY_ENV }), 'CONFIG_FILE_UNREADABLE');
  });

  it('rejects a file that holds a list instead of an object with CONFIG_INVALID', () => {
    const file = tempFile('list.yaml', '- kafka\n- file\n');
    const error = configErrorOf(() => loadConfig({ file, env: API_KEY_ENV }), 'CONFIG_INVALID');
    expect(problemPaths(error)).toEqual(['(root)']);
  });
});
