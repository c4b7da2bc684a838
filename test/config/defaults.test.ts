import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { API_KEY_ENV } from './helpers.ts';

describe('defaults', () => {
  it('gives every option its documented default when only the API key is set', () => {
    expect(loadConfig({ env: API_KEY_ENV })).toEqual({
      source: 'kafka',
      inputFormat: 'avro',
      kafka: {
        brokers: ['127.0.0.1:9092'],
        clientId: 'partner-enrich',
        groupId: 'partner-enrich',
        readerGroupPrefix: 'partner-enrich-',
        ssl: false,
        compression: 'none',
        connectionTimeoutMs: 10_000,
        sessionTimeoutMs: 30_000,
      },
      schemaRegistry: { url: 'http://127.0.0.1:8081' },
      topics: {
        input: 'partners',
        matches: 'partners.matches',
        events: 'partners.events',
        storage: 'partners.storage',
        deadLetters: 'partners.dlq',
        state: 'partner-enrich.state',
        partitions: 6,
        replicationFactor: 1,
      },
      files: { outputDir: 'out', maxRecordBytes: 1_048_576 },
      refdata: {
        baseUrl: 'http://127.0.0.1:8080',
        authUrl: 'http://127.0.0.1:8080',
        dataExchangeUrl: 'http://127.0.0.1:8080',
        identityUrl: 'http://127.0.0.1:8080',
        usageUrl: 'http://127.0.0.1:8080',
        auth: 'apiKey',
        apiKey: 'test-api-key',
        credentialUsername: 'partner-enrich',
        organizationId: 'default-org',
        timeoutMs: 30_000,
      },
      lookup: {
        matchingThreshold: 0.5,
        maxCandidates: 50,
        featuresOn: [],
        featuresOff: [],
        fullMatchThreshold: 0.8,
        maybeMatchThreshold: 0.6,
      },
      batching: { maxTasks: 500, lingerMs: 100, maxInFlightRecords: 5_000, maxConcurrentBulks: 4 },
      quota: {
        serviceTechnicalKey: 'REFDATA_BULK_LOOKUP',
        enabled: true,
        initialBackoffMs: 500,
        maxBackoffMs: 30_000,
      },
      rateLimit: { requestsPerSecond: 20, concurrency: 32 },
      retry: { maxAttempts: 5, initialDelayMs: 200, maxDelayMs: 30_000 },
      polling: { initialDelayMs: 100, maxDelayMs: 5_000, pageSize: 1_000 },
      delivery: 'at-least-once',
      exactlyOnce: { commitIntervalMs: 1_000, transactionTimeoutMs: 60_000 },
      skipUnchanged: true,
      mapping: {},
      storageId: 'partners.storage',
      state: { checkpointIntervalMs: 10_000 },
      rerun: {
        quotaShare: 0.5,
        batchSize: 500,
        maxBulkTasks: 50,
        maxEventLoopUtilization: 0.8,
        waitTimeoutMs: 0,
      },
      observability: { logLevel: 'info', metricsPort: 9464, metricsHost: '127.0.0.1' },
      tracing: {
        enabled: false,
        serviceName: 'partner-enrich',
        endpoint: 'http://127.0.0.1:4318',
        protocol: 'http/protobuf',
        sampleRatio: 1,
      },
      shutdown: { graceMs: 30_000 },
      rerunSchedule: { catchUp: false },
    });
  });

  it('points every reference data endpoint that is not set separately at refdata.baseUrl', () => {
    const config = loadConfig({
      env: API_KEY_ENV,
      overrides: {
        refdata: { baseUrl: 'https://refdata.example.com', usageUrl: 'https://usage.example.com' },
      },
    });
    expect(config.refdata).toMatchObject({
      authUrl: 'https://refdata.example.com',
      dataExchangeUrl: 'https://refdata.example.com',
      identityUrl: 'https://refdata.example.com',
      usageUrl: 'https://usage.example.com',
    });
  });

  it('fills an ssl object given without rejectUnauthorized with rejectUnauthorized true', () => {
    const ca = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
    const config = loadConfig({ env: API_KEY_ENV, overrides: { kafka: { ssl: { ca } } } });
    expect(config.kafka.ssl).toEqual({ ca, rejectUnauthorized: true });
  });

  it('returns a configuration frozen all the way down', () => {
    const config = loadConfig({ env: API_KEY_ENV });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.kafka)).toBe(true);
    expect(Object.isFrozen(config.kafka.brokers)).toBe(true);
    expect(() => {
      (config.batching as { maxTasks: number }).maxTasks = 1;
    }).toThrow(TypeError);
  });
});
