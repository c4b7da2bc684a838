// The schema registry's credentials, against a registry stand-in in this process that
// demands HTTP Basic auth and answers the two calls under test as a Confluent registry does.
// Registration against the real registry is in avro-encoder.integration.test.ts.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSchemaRegistry } from '../../src/cli/enrichment.ts';
import { registerSchema } from '../../src/kafka/avro-encoder.ts';
import { avroPartnerDecoder } from '../../src/serde/partner-decoders.ts';
import { pipelineSchema } from '../../src/serde/schemas.ts';

const PASSWORD = 'pa@ss:w0rd';
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

interface Seen {
  url: string | undefined;
  authorization: string | undefined;
}

/** Answers only requests carrying reg-user's credentials; `status` for the others it lets in. */
async function startRegistry(status: number): Promise<{ server: Server; url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    seen.push({ url: request.url, authorization: request.headers.authorization });
    response.setHeader('content-type', 'application/vnd.schemaregistry.v1+json');
    if (request.headers.authorization !== basic('reg-user', PASSWORD)) {
      response.writeHead(401).end('{"error_code":401,"message":"Unauthorized"}');
    } else if (status !== 200) {
      response.writeHead(status).end(`{"error_code":${status},"message":"busy"}`);
    } else if (request.url === '/schemas/ids/7') {
      response.writeHead(200).end(JSON.stringify({ schema: pipelineSchema('PartnerRecord').text }));
    } else {
      response.writeHead(200).end('{"id":7}');
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('schema registry credentials', () => {
  let registry: Awaited<ReturnType<typeof startRegistry>>;
  const withCredentials = (hostPort: string) => `http://reg-user:${encodeURIComponent(PASSWORD)}@${hostPort}`;
  const matchResult = pipelineSchema('MatchResult').text;
  const registrationFailure = (hostPort: string): Promise<Error> =>
    registerSchema({ url: withCredentials(hostPort) }, 'partners-value', matchResult).then(
      () => expect.fail('registered'),
      (failure: unknown) => failure as Error,
    );
  beforeEach(async () => {
    registry = await startRegistry(200);
  });
  afterEach(() => {
    registry.server.close();
  });

  it('regression: a registry URL with credentials never worked and its password reached the error message', async () => {
    await expect(
      registerSchema({ url: withCredentials(registry.url) }, 'partners-value', matchResult),
    ).resolves.toBe(7);
    expect(registry.seen).toEqual([
      { url: '/subjects/partners-value/versions', authorization: basic('reg-user', PASSWORD) },
    ]);

    const error = await registrationFailure('127.0.0.1:1');
    expect(error).toMatchObject({ code: 'SCHEMA_REGISTRY_UNAVAILABLE' });
    expect(error.message).toContain('schema registry at http://127.0.0.1:1: ');
    for (const secret of [PASSWORD, encodeURIComponent(PASSWORD)])
      expect(error.message).not.toContain(secret);
  });

  it('configured username and password win over the credentials in the URL', async () => {
    const settings = { url: `http://someone:else@${registry.url}`, username: 'reg-user', password: PASSWORD };
    await expect(registerSchema(settings, 'partners-value', matchResult)).resolves.toBe(7);
  });

  it("the decoding client sends the URL's credentials too", async () => {
    const client = createSchemaRegistry({ url: withCredentials(registry.url) });
    await expect(client.getSchema(7)).resolves.toBeDefined();
    expect(registry.seen.at(-1)).toEqual({
      url: '/schemas/ids/7',
      authorization: basic('reg-user', PASSWORD),
    });
  });

  it('regression: credentials the registry refuses (401, 403) at start were SCHEMA_REGISTRATION_REJECTED, and while decoding SCHEMA_REGISTRY_UNAVAILABLE, waited for forever', async () => {
    const wrong = `http://reg-user:expired@${registry.url}`;
    const refused = await registerSchema({ url: wrong }, 'partners-value', matchResult).then(
      () => expect.fail('registered'),
      (failure: unknown) => failure as Error,
    );
    expect(refused).toMatchObject({
      code: 'SCHEMA_REGISTRY_AUTH_FAILED',
      canRetry: false,
      details: { subject: 'partners-value', status: 401 },
    });
    expect(refused.message).toBe(
      `schema registry at http://${registry.url} refused the credentials (HTTP 401) registering partners-value: Unauthorized`,
    );
    expect(refused.message).not.toContain('expired');

    const decoding = avroPartnerDecoder(createSchemaRegistry({ url: wrong }));
    const header = Buffer.from([0, 0, 0, 0, 7]);
    await expect(decoding.decode(Buffer.concat([header, Buffer.from([0])]))).rejects.toMatchObject({
      code: 'SCHEMA_REGISTRY_AUTH_FAILED',
      canRetry: false,
      message: expect.stringContaining(`(HTTP 401) on GET http://${registry.url}/schemas/ids/7`),
    });

    // The credentials known, the permission missing.
    registry.server.close();
    registry = await startRegistry(403);
    await expect(registrationFailure(registry.url)).resolves.toMatchObject({
      code: 'SCHEMA_REGISTRY_AUTH_FAILED',
      details: { status: 403 },
    });
  });

  it('a registry that answers 5xx is unavailable, its URL shown without the credentials', async () => {
    registry.server.close();
    registry = await startRegistry(503);
    const error = await registrationFailure(registry.url);
    expect(error).toMatchObject({ code: 'SCHEMA_REGISTRY_UNAVAILABLE' });
    expect(error.message).toBe(`schema registry at http://${registry.url}: busy`);
  });
});
