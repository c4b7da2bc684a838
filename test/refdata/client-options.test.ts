import { describe, expect, it } from 'vitest';
import { RefDataClient, type RefDataClientOptions } from '../../src/refdata/index.ts';
import { rejectionOf } from './support/client-fixtures.ts';

function optionsError(options: RefDataClientOptions): unknown {
  try {
    new RefDataClient(options);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('client options', () => {
  it.each([
    [
      { roots: { base: 'https://refdata.example' } },
      'credentials: the base root needs apiKey or clientCredentials',
    ],
    [
      { roots: { identity: 'https://id.example' }, credentials: { credentialUsername: 'u' } },
      'credentials: the identity root needs clientCredentials',
    ],
    [
      {
        roots: { dataExchange: 'https://dx.example' },
        credentials: { dataExchangeBasicAuth: { username: 'u', password: 'p' } },
      },
      'credentials: the dataExchange root needs credentialUsername',
    ],
    [
      { roots: {}, credentials: { clientCredentials: { clientId: 'c', clientSecret: 's' } } },
      'roots.auth: clientCredentials need the auth root',
    ],
    [{ roots: { base: 'https://refdata.example' }, credentials: { apiKey: 'k' }, timeoutMs: 0 }, 'timeoutMs'],
    [
      { roots: { base: 'https://refdata.example' }, credentials: { apiKey: 'k' }, retries: 3 },
      'Unrecognized key: "retries"',
    ],
    [{ roots: { baseUrl: 'https://refdata.example' } }, 'roots: Unrecognized key: "baseUrl"'],
  ])('rejects %j at construction naming the problem', (options, problem) => {
    const error = optionsError(options as RefDataClientOptions);
    expect(error).toMatchObject({ code: 'REFDATA_INVALID_OPTIONS' });
    expect((error as Error).message).toContain(problem);
  });

  it('fails with REFDATA_NOT_CONFIGURED when an operation needs a root that was not given', async () => {
    const client = new RefDataClient({
      roots: { base: 'http://127.0.0.1:9' },
      credentials: { apiKey: 'key-123456' },
    });
    const error = await rejectionOf(client.consumeQuota({ body: { service: { technicalKey: 'EXTD' } } }));
    expect(error).toMatchObject({ code: 'REFDATA_NOT_CONFIGURED', details: { root: 'usage' } });
  });
});
