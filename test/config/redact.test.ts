import { describe, expect, it } from 'vitest';
import {
  configOptions,
  configSecrets,
  describeConfig,
  loadConfig,
  redactConfig,
  redactUrl,
} from '../../src/config/index.ts';

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
        url: 'https://registry-user:[redacted]@registry.example.com/',
        username: 'registry-user',
        password: '[redacted]',
      },
      refdata: { apiKey: '[redacted]', clientSecret: '[redacted]', dataExchangePassword: '[redacted]' },
      batching: { maxTasks: 500 },
    });
  });

  it('regression: URL redaction left part of a password with "@", a user-only token and secret query parameters in clear', () => {
    const config = loadConfig({
      env: {
        PARTNER_ENRICH_REFDATA__API_KEY: 'k',
        PARTNER_ENRICH_REFDATA__BASE_URL: 'https://svc-user:Xy7@Secret9@ref.example.com/',
        PARTNER_ENRICH_TRACING__ENDPOINT: 'https://tokenonly123@otlp.example.com/',
        PARTNER_ENRICH_SCHEMA_REGISTRY__URL:
          'https://registry.example.com/?api_key=K1&token=K2&Access_Token=K3&password=K4&secret=K5&region=eu',
      },
    });
    const description = describeConfig(config);
    for (const secret of ['Xy7', 'Secret9', 'tokenonly123', 'K1', 'K2', 'K3', 'K4', 'K5'])
      expect(description).not.toContain(secret);
    expect(redactConfig(config)).toMatchObject({
      refdata: { baseUrl: 'https://svc-user:[redacted]@ref.example.com/' },
      tracing: { endpoint: 'https://[redacted]@otlp.example.com/' },
      schemaRegistry: {
        url: 'https://registry.example.com/?api_key=[redacted]&token=[redacted]&Access_Token=[redacted]&password=[redacted]&secret=[redacted]&region=eu',
      },
    });
  });

  it('redactUrl hides the credentials of URLs in text that is not a URL, and changes nothing else', () => {
    expect(redactUrl('registry at https://u:p@ss@h:8081/x?token=t1&a=1 did not answer')).toBe(
      'registry at https://[redacted]@h:8081/x?token=[redacted]&a=1 did not answer',
    );
    for (const plain of ['http://127.0.0.1:8081', 'broker-a:9092', 'https://h/?page=2', 'plain text'])
      expect(redactUrl(plain)).toBe(plain);
  });

  it("configSecrets lists every credential's value, a URL's password and the registry's Basic header value", () => {
    const secrets = configSecrets(configWithEverySecret());
    expect(secrets).toEqual(expect.arrayContaining(Object.values(SECRETS)));
    expect(secrets).toContain(Buffer.from(`registry-user:${SECRETS.registryPassword}`).toString('base64'));
    expect(secrets).not.toContain('registry-user');
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
    const notCredentials = new Set(['quota.serviceTechnicalKey', 'kafka.sasl.tokenUrl']);
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
