// What the operator of `run` hears of the reference data service's OAuth tokens: a refresh that
// fails while the token in hand still serves fails no call, so the log is the only place it shows.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRefDataClient } from '../../src/cli/enrichment.ts';
import { loadConfig } from '../../src/config/index.ts';
import { Redactor } from '../../src/observability/secret-redactor.ts';
import { capturedLogger } from '../support/captured-log.ts';
import { eventually } from '../support/kafka.ts';
import { TOKEN_PATH, startTestServer, type TestServer } from '../refdata/support/refdata-test-server.ts';

const CLIENT_SECRET = 'refdata-secret-5c81e2';
let server: TestServer | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await server?.close();
  server = undefined;
});

describe("the reference data client of the CLI's commands", () => {
  it('regression: a token refresh that failed while the token in hand served was logged nowhere; now a warning names the token endpoint and client id, never the secret', async () => {
    let away = false;
    let issued = 0;
    server = await startTestServer((request) => {
      if (request.path !== TOKEN_PATH) return { body: { id: 'job-1', status: 'RUNNING', progress: 10 } };
      if (away) return { status: 503, body: { code: 'UNAVAILABLE', message: 'token endpoint away' } };
      issued += 1;
      return { body: { access_token: `token-${issued}`, expires_in: 60, token_type: 'Bearer' } };
    });
    const config = loadConfig({
      env: {},
      overrides: {
        refdata: {
          baseUrl: server.url,
          auth: 'oauth',
          clientId: 'enrich-client',
          clientSecret: CLIENT_SECRET,
        },
        retry: { maxAttempts: 2, initialDelayMs: 10, maxDelayMs: 20 },
      },
    });
    // Only the clock the token's lifetime is measured by: the HTTP and its retries run as they do.
    vi.useFakeTimers({ toFake: ['Date'] });
    const log = capturedLogger('info', new Redactor([CLIENT_SECRET]));
    const client = createRefDataClient(config.refdata, config.retry, log.logger);
    const call = () => client.getExtdLookupJob({ path: { id: 'job-1' } });
    await call();
    vi.setSystemTime(Date.now() + 31_000); // past the 30 s margin, 29 s left
    away = true;
    await call();
    await eventually(() => log.lines().some((line) => line.level === 40));
    const [warning] = log.lines().filter((line) => line.level === 40);
    expect(warning?.msg).toMatch(/^OAuth token of the reference data service not refreshed.*503/);
    expect(warning).toMatchObject({ authUrl: server.url, clientId: 'enrich-client' });
    expect(log.text()).not.toContain(CLIENT_SECRET);
    expect(log.text()).not.toContain('token-1');
  });
});
