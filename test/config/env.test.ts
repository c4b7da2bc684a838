import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { API_KEY_ENV, configErrorOf, problemPaths } from './helpers.ts';

const withEnv = (env: Record<string, string>) => loadConfig({ env: { ...API_KEY_ENV, ...env } });

describe('environment variables', () => {
  it('map PARTNER_ENRICH_ + UPPER_SNAKE path with __ between levels to the option', () => {
    const config = withEnv({
      PARTNER_ENRICH_SOURCE: 'file',
      PARTNER_ENRICH_KAFKA__CLIENT_ID: 'enricher-1',
      PARTNER_ENRICH_SCHEMA_REGISTRY__URL: 'http://registry:8081',
      PARTNER_ENRICH_TOPICS__DEAD_LETTERS: 'dlq',
    });
    expect(config.source).toBe('file');
    expect(config.kafka.clientId).toBe('enricher-1');
    expect(config.schemaRegistry.url).toBe('http://registry:8081');
    expect(config.topics.deadLetters).toBe('dlq');
  });

  it('become numbers where the option is a number', () => {
    const config = withEnv({
      PARTNER_ENRICH_BATCHING__MAX_TASKS: '1000',
      PARTNER_ENRICH_LOOKUP__MATCHING_THRESHOLD: '0.7',
    });
    expect(config.batching.maxTasks).toBe(1000);
    expect(config.lookup.matchingThreshold).toBe(0.7);
  });

  it('become booleans where the option is a boolean (true/false, 1/0, yes/no, on/off)', () => {
    expect(withEnv({ PARTNER_ENRICH_SKIP_UNCHANGED: 'false' }).skipUnchanged).toBe(false);
    expect(withEnv({ PARTNER_ENRICH_DELIVERY: 'exactly-once' }).delivery).toBe('exactly-once');
    expect(
      withEnv({ PARTNER_ENRICH_EXACTLY_ONCE__COMMIT_INTERVAL_MS: '250' }).exactlyOnce.commitIntervalMs,
    ).toBe(250);
    expect(withEnv({ PARTNER_ENRICH_SKIP_UNCHANGED: '0' }).skipUnchanged).toBe(false);
    expect(withEnv({ PARTNER_ENRICH_QUOTA__ENABLED: 'NO' }).quota.enabled).toBe(false);
    expect(withEnv({ PARTNER_ENRICH_KAFKA__SSL: 'true' }).kafka.ssl).toBe(true);
  });

  it('become lists, split at commas and trimmed, where the option is a list', () => {
    const config = withEnv({
      PARTNER_ENRICH_KAFKA__BROKERS: 'a:9092, b:9092 ,c:9092',
      PARTNER_ENRICH_LOOKUP__FEATURES_ON: 'fuzzyNames',
    });
    expect(config.kafka.brokers).toEqual(['a:9092', 'b:9092', 'c:9092']);
    expect(config.lookup.featuresOn).toEqual(['fuzzyNames']);
  });

  it('set an empty list when empty, and count as unset when empty for any other option', () => {
    const config = withEnv({ PARTNER_ENRICH_LOOKUP__FEATURES_ON: '', PARTNER_ENRICH_TOPICS__INPUT: '' });
    expect(config.lookup.featuresOn).toEqual([]);
    expect(config.topics.input).toBe('partners');
  });

  it('reach into the ssl object, which turns TLS on', () => {
    const ca = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
    const config = withEnv({ PARTNER_ENRICH_KAFKA__SSL__CA: ca });
    expect(config.kafka.ssl).toEqual({ ca, rejectUnauthorized: true });
  });

  it('accept the conventional KAFKA_BROKERS and SCHEMA_REGISTRY_URL', () => {
    const config = withEnv({
      KAFKA_BROKERS: 'k1:9092,k2:9092',
      SCHEMA_REGISTRY_URL: 'http://registry:8081/apis/ccompat/v7',
    });
    expect(config.kafka.brokers).toEqual(['k1:9092', 'k2:9092']);
    expect(config.schemaRegistry.url).toBe('http://registry:8081/apis/ccompat/v7');
  });

  it("accept OpenTelemetry's OTEL_SERVICE_NAME and OTEL_EXPORTER_OTLP_ENDPOINT for tracing", () => {
    const config = withEnv({
      OTEL_SERVICE_NAME: 'enricher-eu',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318',
      PARTNER_ENRICH_TRACING__ENABLED: 'true',
      PARTNER_ENRICH_TRACING__SAMPLE_RATIO: '0.25',
    });
    expect(config.tracing).toEqual({
      enabled: true,
      serviceName: 'enricher-eu',
      endpoint: 'http://otel-collector:4318',
      protocol: 'http/protobuf',
      sampleRatio: 0.25,
    });
    expect(
      withEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318',
        PARTNER_ENRICH_TRACING__ENDPOINT: 'http://tempo:4318',
      }).tracing.endpoint,
    ).toBe('http://tempo:4318');
  });

  it('report an OTLP protocol the exporter does not speak, naming the variable', () => {
    const error = configErrorOf(
      () => withEnv({ PARTNER_ENRICH_TRACING__PROTOCOL: 'grpc' }),
      'CONFIG_INVALID',
    );
    expect(problemPaths(error)).toEqual(['tracing.protocol']);
    expect(error.message).toContain('(from environment variable PARTNER_ENRICH_TRACING__PROTOCOL)');
  });

  it('rank the namespaced name above its conventional shorthand', () => {
    const config = withEnv({ KAFKA_BROKERS: 'short:9092', PARTNER_ENRICH_KAFKA__BROKERS: 'namespaced:9092' });
    expect(config.kafka.brokers).toEqual(['namespaced:9092']);
  });

  it('report text that is not a number with the option path and the variable name', () => {
    const error = configErrorOf(
      () => withEnv({ PARTNER_ENRICH_BATCHING__MAX_TASKS: 'many' }),
      'CONFIG_INVALID',
    );
    expect(problemPaths(error)).toEqual(['batching.maxTasks']);
    expect(error.message).toContain(
      'batching.maxTasks: Invalid input: expected a whole number in decimal digits, e.g. 1000 ' +
        '(from environment variable PARTNER_ENRICH_BATCHING__MAX_TASKS)',
    );
  });

  it('regression: a section set by one variable named no source for the options it still lacks (PARTNER_ENRICH_KAFKA__SASL__PASSWORD alone: mechanism and username "required", no variable named)', () => {
    const error = configErrorOf(
      () => withEnv({ PARTNER_ENRICH_KAFKA__SASL__PASSWORD: 'a-password-9d1' }),
      'CONFIG_INVALID',
    );
    expect(problemPaths(error)).toEqual(['kafka.sasl.mechanism', 'kafka.sasl.username']);
    expect(error.message).toContain(
      'kafka.sasl.username: required ' +
        '(from environment variable PARTNER_ENRICH_KAFKA__SASL__PASSWORD, which set kafka.sasl)',
    );
    expect(error.message).not.toContain('a-password-9d1');
  });

  it('read numbers in decimal digits, trimmed, with a fraction only where the option takes one', () => {
    const config = withEnv({
      PARTNER_ENRICH_BATCHING__MAX_TASKS: ' 0250 ',
      PARTNER_ENRICH_LOOKUP__MATCHING_THRESHOLD: '.75',
    });
    expect(config.batching.maxTasks).toBe(250);
    expect(config.lookup.matchingThreshold).toBe(0.75);
    const error = configErrorOf(
      () => withEnv({ PARTNER_ENRICH_BATCHING__MAX_TASKS: '2.5' }),
      'CONFIG_INVALID',
    );
    expect(error.message).toContain(
      'batching.maxTasks: Invalid input: expected a whole number in decimal digits',
    );
  });

  it.each([
    ['PARTNER_ENRICH_BATCHING__MAX_TASKS', 'batching.maxTasks', '0x10', 'whole number'],
    ['PARTNER_ENRICH_BATCHING__MAX_TASKS', 'batching.maxTasks', '1e3', 'whole number'],
    ['PARTNER_ENRICH_REFDATA__TIMEOUT_MS', 'refdata.timeoutMs', '0b1010', 'whole number'],
    ['PARTNER_ENRICH_SHUTDOWN__GRACE_MS', 'shutdown.graceMs', '0o17', 'whole number'],
    ['PARTNER_ENRICH_LOOKUP__MATCHING_THRESHOLD', 'lookup.matchingThreshold', '5e-1', 'number'],
  ])(
    'regression: %s (%s) read %s as a number, which is not written in decimal digits',
    (variable, path, text, kind) => {
      const error = configErrorOf(() => withEnv({ [variable]: text }), 'CONFIG_INVALID');
      expect(problemPaths(error)).toEqual([path]);
      expect(error.message).toContain(
        `${path}: Invalid input: expected a ${kind} in decimal digits, e.g. ` +
          `${kind === 'number' ? '0.5' : '1000'} (from environment variable ${variable})`,
      );
      expect(error.message).not.toContain(text);
    },
  );

  it('report text that is not a boolean with the option path', () => {
    const error = configErrorOf(() => withEnv({ PARTNER_ENRICH_SKIP_UNCHANGED: 'maybe' }), 'CONFIG_INVALID');
    expect(problemPaths(error)).toEqual(['skipUnchanged']);
  });

  it('report an invalid list item with its index', () => {
    const error = configErrorOf(
      () => withEnv({ PARTNER_ENRICH_KAFKA__BROKERS: 'a:9092,no-port' }),
      'CONFIG_INVALID',
    );
    expect(problemPaths(error)).toEqual(['kafka.brokers[1]']);
    expect(error.message).toContain('must be host:port');
  });

  it('reject a misspelled nested option as unknown, naming the variable', () => {
    const error = configErrorOf(() => withEnv({ PARTNER_ENRICH_BATCHING__MAX_TASK: '5' }), 'CONFIG_INVALID');
    expect(problemPaths(error)).toEqual(['batching.maxTask']);
    expect(error.message).toContain(
      'unknown option (from environment variable PARTNER_ENRICH_BATCHING__MAX_TASK)',
    );
  });

  it('regression: reject a nested option written with _ where __ belongs, naming the variable meant (it was ignored, the option kept its default)', () => {
    const error = configErrorOf(
      () => withEnv({ PARTNER_ENRICH_REFDATA_TIMEOUT_MS: '5000' }),
      'CONFIG_INVALID',
    );
    expect(problemPaths(error)).toEqual(['refdataTimeoutMs']);
    expect(error.message).toContain(
      'unknown option (from environment variable PARTNER_ENRICH_REFDATA_TIMEOUT_MS; levels are separated by __: PARTNER_ENRICH_REFDATA__TIMEOUT_MS)',
    );
  });

  it('ignore other PARTNER_ENRICH_ variables, which belong to the local infrastructure scripts', () => {
    const config = withEnv({ PARTNER_ENRICH_KAFKA_VERSIONS: '4.4.0', PARTNER_ENRICH_NO_DOCKER: 'true' });
    expect(config).toEqual(loadConfig({ env: API_KEY_ENV }));
  });
});
