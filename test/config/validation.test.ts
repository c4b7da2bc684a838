import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, type ConfigInput } from '../../src/config/index.ts';
import { API_KEY_ENV, configErrorOf, problemPaths } from './helpers.ts';

/** Loads with the API key from the environment and `overrides`, expecting CONFIG_INVALID. */
const invalid = (overrides: unknown) =>
  configErrorOf(
    () => loadConfig({ env: API_KEY_ENV, overrides: overrides as ConfigInput }),
    'CONFIG_INVALID',
  );

describe('invalid values', () => {
  it('include a delivery mode not known and a transaction timeout not above the commit interval', () => {
    expect(
      problemPaths(
        invalid({
          delivery: 'exactly-twice',
          exactlyOnce: { commitIntervalMs: 5_000, transactionTimeoutMs: 5_000 },
        }),
      ).sort(),
    ).toEqual(['delivery', 'exactlyOnce.transactionTimeoutMs']);
    expect(problemPaths(invalid({ exactlyOnce: { transactionTimeoutMs: 900_001 } }))).toEqual([
      'exactlyOnce.transactionTimeoutMs',
    ]);
  });

  it("regression: durations longer than Node's timers wait (2^31 ms and more) were taken, and fired at once (a request time-out of 2^31 ms timed every request out; config check said nothing)", () => {
    expect(
      problemPaths(
        invalid({
          refdata: { timeoutMs: 2 ** 31 },
          shutdown: { graceMs: 2 ** 32 },
          batching: { lingerMs: 2 ** 31 },
          retry: { maxDelayMs: 2 ** 31 },
        }),
      ).sort(),
    ).toEqual(['batching.lingerMs', 'refdata.timeoutMs', 'retry.maxDelayMs', 'shutdown.graceMs']);
    expect(() =>
      loadConfig({ env: API_KEY_ENV, overrides: { refdata: { timeoutMs: 2 ** 31 - 1 } } }),
    ).not.toThrow();
  });

  it('are all reported at once, each with its path', () => {
    const error = invalid({
      source: 'ftp',
      kafka: { brokers: [], sessionTimeoutMs: -1 },
      schemaRegistry: { url: 'not a url' },
      topics: { input: 'has spaces', partitions: 0 },
      refdata: { baseUrl: 'ftp://refdata.example.com' },
      lookup: { matchingThreshold: 1.5, maxCandidates: 10 },
      batching: { maxTasks: 10_001, lingerMs: 1.5 },
      polling: { pageSize: 1001 },
      observability: { logLevel: 'verbose', metricsPort: 65_536 },
    });
    expect(problemPaths(error).sort()).toEqual(
      [
        'source',
        'kafka.brokers',
        'kafka.sessionTimeoutMs',
        'schemaRegistry.url',
        'topics.input',
        'topics.partitions',
        'refdata.baseUrl',
        'lookup.matchingThreshold',
        'lookup.maxCandidates',
        'batching.maxTasks',
        'batching.lingerMs',
        'polling.pageSize',
        'observability.logLevel',
        'observability.metricsPort',
      ].sort(),
    );
    expect(error.message).toMatch(/^Invalid configuration \(14 problems\):\n {2}- /);
  });

  it('are described without quoting the value, which may be a credential', () => {
    const error = invalid({
      refdata: { apiKey: 12345678 },
      kafka: { sasl: { mechanism: 'plain', username: 'u', password: 98765432 } },
    });
    expect(problemPaths(error).sort()).toEqual(['kafka.sasl.password', 'refdata.apiKey']);
    expect(error.message).not.toContain('12345678');
    expect(error.message).not.toContain('98765432');
  });

  it('include a rerun quota share of 0 or above 1 and a batch size outside 1..500', () => {
    expect(problemPaths(invalid({ rerun: { quotaShare: 0, batchSize: 501 } })).sort()).toEqual([
      'rerun.batchSize',
      'rerun.quotaShare',
    ]);
    expect(problemPaths(invalid({ rerun: { quotaShare: 1.01, batchSize: 0 } })).sort()).toEqual([
      'rerun.batchSize',
      'rerun.quotaShare',
    ]);
    expect(
      loadConfig({ env: API_KEY_ENV, overrides: { rerun: { quotaShare: 1, batchSize: 1 } } }).rerun,
    ).toMatchObject({
      quotaShare: 1,
      batchSize: 1,
    });
  });

  it('include a section given as something other than an object', () => {
    expect(problemPaths(invalid({ batching: 500 }))).toEqual(['batching']);
  });

  it('include a missing field of an optional section that was given', () => {
    const error = invalid({ kafka: { sasl: { mechanism: 'scram-sha-512' } } });
    expect(problemPaths(error).sort()).toEqual(['kafka.sasl.password', 'kafka.sasl.username']);
    expect(error.message).toContain('kafka.sasl.username: required');
  });

  it("include a SASL mechanism's credentials missing and the other mechanism's given", () => {
    const oauth = invalid({ kafka: { sasl: { mechanism: 'oauthbearer', username: 'u', clientId: 'c' } } });
    expect(problemPaths(oauth).sort()).toEqual([
      'kafka.sasl.clientSecret',
      'kafka.sasl.tokenUrl',
      'kafka.sasl.username',
    ]);
    expect(oauth.message).toContain('kafka.sasl.tokenUrl: required with mechanism oauthbearer');
    expect(oauth.message).toContain('kafka.sasl.username: not used with mechanism oauthbearer');
    const plain = invalid({
      kafka: {
        sasl: { mechanism: 'plain', username: 'u', password: 'secret', extensions: ['logicalCluster=lkc-1'] },
      },
    });
    expect(problemPaths(plain)).toEqual(['kafka.sasl.extensions']);
    expect(
      problemPaths(
        invalid({
          kafka: {
            sasl: {
              mechanism: 'oauthbearer',
              tokenUrl: 'ftp://idp.example.com/token',
              clientId: 'c',
              clientSecret: 'client-secret',
              extensions: ['logical cluster'],
            },
          },
        }),
      ).sort(),
    ).toEqual(['kafka.sasl.extensions[0]', 'kafka.sasl.tokenUrl']);
  });

  it('take OAUTHBEARER with a token endpoint, a client, its secret, a scope and extensions', () => {
    const config = loadConfig({
      env: API_KEY_ENV,
      overrides: {
        kafka: {
          sasl: {
            mechanism: 'oauthbearer',
            tokenUrl: 'https://idp.example.com/oauth2/token',
            clientId: 'partner-enrich',
            clientSecret: 'client-secret',
            scope: 'kafka',
            extensions: ['logicalCluster=lkc-1', 'identityPoolId=pool-2'],
          },
        },
      },
    });
    expect(config.kafka.sasl).toMatchObject({ mechanism: 'oauthbearer', clientId: 'partner-enrich' });
  });

  it('inside the ssl object are reported at their own path, not as "boolean or object"', () => {
    expect(problemPaths(invalid({ kafka: { ssl: { rejectUnauthorized: 'yes' } } }))).toEqual([
      'kafka.ssl.rejectUnauthorized',
    ]);
    expect(invalid({ kafka: { ssl: 'on' } }).message).toContain(
      'kafka.ssl: Invalid input: expected boolean or object',
    );
  });
});

describe('unknown options', () => {
  it('are rejected with their path, at the top level and inside sections', () => {
    const error = invalid({ colour: 'blue', kafka: { brokerList: ['a:9092'] }, refdata: { apikey: 'x' } });
    expect(problemPaths(error).sort()).toEqual(['colour', 'kafka.brokerList', 'refdata.apikey']);
    expect(error.message).toContain('kafka.brokerList: unknown option');
  });

  it('regression: a TLS file path that names no readable file passed, to be read later as PEM text', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tls-'));
    const cert = join(dir, 'tls.crt');
    await writeFile(cert, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const error = invalid({
      kafka: { ssl: { key: join(dir, 'tls.kye'), cert: dir, ca: join(dir, 'ca.pem') } },
    });
    expect(error.details.problems).toEqual(
      ['kafka.ssl.ca', 'kafka.ssl.cert', 'kafka.ssl.key'].map((path) => ({
        path,
        message: 'must be PEM text (-----BEGIN ...) or the path of a readable file',
        source: 'command-line flags',
      })),
    );
    expect(error.message).not.toContain(dir);
    const pemText = '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----';
    expect(
      loadConfig({
        env: { PARTNER_ENRICH_REFDATA__API_KEY: 'k' },
        overrides: { kafka: { ssl: { cert, key: pemText } } },
      }).kafka.ssl,
    ).toEqual({ cert, key: pemText, rejectUnauthorized: true });
  });

  it('are rejected inside the ssl object', () => {
    expect(problemPaths(invalid({ kafka: { ssl: { rejectUnauthorized: false, verify: false } } }))).toEqual([
      'kafka.ssl.verify',
    ]);
  });
});

describe('cross-field checks', () => {
  it('require refdata.apiKey when refdata.auth is apiKey', () => {
    const error = configErrorOf(() => loadConfig({ env: {} }), 'CONFIG_INVALID');
    expect(problemPaths(error)).toEqual(['refdata.apiKey']);
    expect(error.message).toContain('refdata.apiKey: required when refdata.auth is apiKey');
  });

  it('require refdata.clientId and refdata.clientSecret when refdata.auth is oauth', () => {
    const error = configErrorOf(
      () => loadConfig({ env: {}, overrides: { refdata: { auth: 'oauth' } } }),
      'CONFIG_INVALID',
    );
    expect(problemPaths(error)).toEqual(['refdata.clientId', 'refdata.clientSecret']);
  });

  it('leave the service credentials out for commands that only work on Kafka (rerun status, topics create, ...)', () => {
    const config = loadConfig({ env: {}, serviceCredentials: false });
    expect(config.refdata.apiKey).toBeUndefined();
    // Everything else is still checked.
    const error = configErrorOf(
      () => loadConfig({ env: {}, serviceCredentials: false, overrides: { refdata: { timeoutMs: -1 } } }),
      'CONFIG_INVALID',
    );
    expect(problemPaths(error)).toEqual(['refdata.timeoutMs']);
  });

  it('accept oauth with a client id and secret and no API key', () => {
    const config = loadConfig({
      env: {},
      overrides: { refdata: { auth: 'oauth', clientId: 'partner-enrich', clientSecret: 'client-secret' } },
    });
    expect(config.refdata.auth).toBe('oauth');
  });

  it('keep lookup.maybeMatchThreshold at or below lookup.fullMatchThreshold', () => {
    const error = invalid({ lookup: { fullMatchThreshold: 0.6, maybeMatchThreshold: 0.7 } });
    expect(problemPaths(error)).toEqual(['lookup.maybeMatchThreshold']);
  });

  it('refuse a feature both switched on and off', () => {
    const error = invalid({ lookup: { featuresOn: ['a', 'b'], featuresOff: ['c', 'b'] } });
    expect(problemPaths(error)).toEqual(['lookup.featuresOff[1]']);
  });

  it('refuse two topic roles on one topic', () => {
    const error = invalid({ topics: { deadLetters: 'partners' } });
    expect(problemPaths(error)).toEqual(['topics.deadLetters']);
    expect(error.message).toContain('must differ from topics.input');
  });

  it('regression: a mapping file with Avro Kafka input (the default inputFormat) passed, and `run` dead-lettered every Avro record as "JSON input is not valid UTF-8"; now refused naming mapping.file', () => {
    const mapping = { file: '/etc/partner-enrich/mapping.json' };
    const error = invalid({ mapping });
    expect(problemPaths(error)).toEqual(['mapping.file']);
    expect(error.message).toContain('inputFormat json');
    expect(() => loadConfig({ env: API_KEY_ENV, overrides: { mapping, inputFormat: 'json' } })).not.toThrow();
    expect(() => loadConfig({ env: API_KEY_ENV, overrides: { mapping, source: 'file' } })).not.toThrow();
  });

  it('require the schema registry user name and password together', () => {
    expect(problemPaths(invalid({ schemaRegistry: { username: 'registry-user' } }))).toEqual([
      'schemaRegistry.password',
    ]);
    expect(problemPaths(invalid({ schemaRegistry: { password: 'registry-pass' } }))).toEqual([
      'schemaRegistry.username',
    ]);
  });

  it('keep every initial backoff at or below its cap', () => {
    const error = invalid({
      quota: { initialBackoffMs: 60_000 },
      retry: { initialDelayMs: 50, maxDelayMs: 10 },
      polling: { initialDelayMs: 6_000 },
    });
    expect(problemPaths(error)).toEqual([
      'quota.initialBackoffMs',
      'retry.initialDelayMs',
      'polling.initialDelayMs',
    ]);
  });
});
