// kafkajs's SASL options from `kafka.sasl`: OAUTHBEARER tokens asked of a real token endpoint
// over HTTP (test/support/oauth-issuer.ts), kept while they are good, refusals said plainly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../deploy/local/processes.ts';
import { loadConfig } from '../../src/config/index.ts';
import { saslOptions } from '../../src/kafka/sasl.ts';
import { startOAuthIssuer, type OAuthIssuer } from '../support/oauth-issuer.ts';

type OAuthBearerOptions = {
  oauthBearerProvider: () => Promise<{ value: string; extensions?: Record<string, string> }>;
};

let issuer: OAuthIssuer;
beforeAll(async () => {
  issuer = await startOAuthIssuer({ app: { secret: 'app-secret-1', principal: 'app' } }, 600);
});
afterAll(() => issuer.close());

function oauthSasl(tokenUrl: string, clientSecret: string, extensions: string[] = []) {
  const config = loadConfig({
    env: { PARTNER_ENRICH_REFDATA__API_KEY: 'unused-key' },
    overrides: {
      kafka: { sasl: { mechanism: 'oauthbearer', tokenUrl, clientId: 'app', clientSecret, extensions } },
    },
  });
  return saslOptions(
    config.kafka.sasl as NonNullable<typeof config.kafka.sasl>,
  ) as unknown as OAuthBearerOptions;
}

describe('kafka.sasl oauthbearer', () => {
  it('hands kafkajs the endpoint token with the extensions, and the same token while it is good', async () => {
    const sasl = oauthSasl(issuer.url, 'app-secret-1', ['logicalCluster=lkc-1', 'identityPoolId=pool=2']);
    const before = issuer.issued.length;
    const first = await sasl.oauthBearerProvider();
    const second = await sasl.oauthBearerProvider();
    expect(first.value).toBe(issuer.issued.at(-1));
    expect(first.extensions).toEqual({ logicalCluster: 'lkc-1', identityPoolId: 'pool=2' });
    expect(second.value).toBe(first.value);
    expect(issuer.issued.length - before).toBe(1);
  });

  it('says which endpoint refused which client, and why, without the secret', async () => {
    const sasl = oauthSasl(issuer.url, 'wrong-secret-2');
    const refusal = sasl.oauthBearerProvider();
    await expect(refusal).rejects.toMatchObject({ code: 'KAFKA_AUTHENTICATION_FAILED' });
    await expect(refusal).rejects.toThrow(
      `the OAuth token endpoint ${issuer.url} refused client app: 401 invalid_client: client authentication failed: check kafka.sasl`,
    );
  });

  it("regression: a secret in the token URL's query was said in the failure (config check redacts it); now the URL is named without it, and one with credentials is refused by the configuration (fetch refused it, naming it whole)", async () => {
    const sasl = oauthSasl(`http://127.0.0.1:${await freePort()}/token?client_secret=q-4`, 'app-secret-1');
    const failure = sasl.oauthBearerProvider();
    await expect(failure).rejects.toThrow(
      /^the OAuth token endpoint http:\/\/127\.0\.0\.1:\d+\/token\?client_secret=\[redacted\] gave no token/,
    );
    await expect(failure).rejects.not.toThrow(/q-4/);
    expect(() => oauthSasl('http://app:url-pw-3@127.0.0.1:1/token', 'app-secret-1')).toThrow(
      /kafka\.sasl\.tokenUrl: must not hold credentials/,
    );
  }, 20_000);

  it('gives up on an endpoint that does not answer after its attempts, as an outage', async () => {
    const sasl = oauthSasl(`http://127.0.0.1:${await freePort()}/token`, 'app-secret-1');
    await expect(sasl.oauthBearerProvider()).rejects.toMatchObject({
      code: 'KAFKA_UNAVAILABLE',
      message: expect.stringContaining('gave no token for client app in 4 attempts'),
    });
  }, 20_000);
});
