import { describe, expect, it } from 'vitest';
import { configOptions, describeConfig, loadConfig, redactConfig } from '../../src/config/index.ts';

/** A distinct value per credential, so that a leak of any one of them is caught. */
const SECRETS = {
  apiKey: 'secret-api-key-1111',
  clientSecret: 'secret-client-2222',
  dataExchangePassword: 'secret-exchange-3333',
  saslPassword: 'secret-sasl-4444',
  registryPassword: 'secret-registry-5555',
  sslKey: '-----BEGIN PRIVATE KEY-----secret-6666',
  urlPassword: 'secret-url-7777',
};

const configWithEverySecret = () =>
  loadConfig({
    env: { PARTNER_ENRICH_REFDATA__API_KEY: SECRETS.apiKey },
    overrides: {
      kafka: {
        ssl: { key: SECRETS.sslKey },
        sasl: { mechanism: 'scram-sha-512', username: 'kafka-user', password: SECRETS.saslPassword },
      },
      schemaRegistry: {
        url: `https://registry-user:${SECRETS.urlPassword}@registry.example.com`,
        username: 'registry-user',
        password: SECRETS.registryPassword,
      },
      refdata: { clientSecret: SECRETS.clientSecret, dataExchangePassword: SECRETS.dataExchangePassword },
    },
  });

describe('redaction', () => {
  it('describeConfig never shows a credential', () => {
    const description = describeConfig(configWithEverySecret());
    for (const secret of Object.values(SECRETS)) expect(description).not.toContain(secret);
  });

  it('replaces each credential with "[redacted]" and keeps everything else', () => {
    expect(redactConfig(configWithEverySecret())).toMatchObject({
      kafka: {
        ssl: { key: '[redacted]', rejectUnauthorized: true },
        sasl: { mechanism: 'scram-sha-512', username: 'kafka-user', password: '[redacted]' },
      },
      schemaRegistry: {
        url: 'https://registry-user:[redacted]@registry.example.com',
        username: 'registry-user',
        password: '[redacted]',
      },
      refdata: { apiKey: '[redacted]', clientSecret: '[redacted]', dataExchangePassword: '[redacted]' },
      batching: { maxTasks: 500 },
    });
  });

  it('leaves the configuration itself untouched', () => {
    const config = configWithEverySecret();
    redactConfig(config);
    expect(config.refdata.apiKey).toBe(SECRETS.apiKey);
  });

  it('describeConfig is pretty JSON that parses back', () => {
    const description = describeConfig(configWithEverySecret());
    expect(description).toContain('\n  "source": "kafka"');
    expect(JSON.parse(description)).toEqual(redactConfig(configWithEverySecret()));
  });

  it('covers every option named like a credential, except names that only look like one', () => {
    const notCredentials = new Set(['quota.serviceTechnicalKey']);
    const credentialLike = configOptions.filter(
      (option) =>
        /password|secret|token|key/i.test(option.path.split('.').at(-1) ?? '') &&
        !notCredentials.has(option.path),
    );
    expect(credentialLike.filter((option) => !option.secret).map((option) => option.path)).toEqual([]);
    expect(credentialLike.map((option) => option.path).sort()).toEqual(
      configOptions
        .filter((option) => option.secret)
        .map((option) => option.path)
        .sort(),
    );
  });
});
