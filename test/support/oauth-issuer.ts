// An OAuth 2.0 token endpoint for tests (client credentials grant, HTTP Basic client
// authentication): it issues the unsigned JWTs the test broker's OAUTHBEARER validator takes
// (deploy/local/kafka-broker.ts), for the clients it knows, each token naming its client's
// principal, and keeps every token it issued so that a test can look for them in logs.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OAuthIssuer {
  url: string;
  /** Every access token issued, in order. */
  issued: string[];
  /** When each token was issued (ms since the epoch), in the same order. */
  issuedAt: number[];
  /** While true, every request is answered 503, as by an endpoint away. */
  away: boolean;
  close(): Promise<void>;
}

export interface OAuthClient {
  secret: string;
  /** The Kafka principal (`sub`) of its tokens. */
  principal: string;
}

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Starts the endpoint on 127.0.0.1; tokens live `lifetimeS` seconds. */
export async function startOAuthIssuer(
  clients: Record<string, OAuthClient>,
  lifetimeS: number,
): Promise<OAuthIssuer> {
  const issued: string[] = [];
  const issuedAt: number[] = [];
  let away = false;
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk));
    request.on('end', () => {
      const answer = (status: number, json: object) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(json));
      };
      if (away) return answer(503, { error: 'temporarily_unavailable' });
      const [scheme, encoded = ''] = (request.headers.authorization ?? '').split(' ');
      const [id = '', secret] = Buffer.from(encoded, 'base64')
        .toString('utf8')
        .split(':')
        .map(decodeURIComponent);
      const client = clients[id];
      if (request.method !== 'POST' || new URLSearchParams(body).get('grant_type') !== 'client_credentials')
        return answer(400, { error: 'unsupported_grant_type' });
      if (scheme !== 'Basic' || !client || client.secret !== secret)
        return answer(401, { error: 'invalid_client', error_description: 'client authentication failed' });
      const now = Math.floor(Date.now() / 1000);
      const token = `${base64url({ alg: 'none' })}.${base64url({ sub: client.principal, iat: now, exp: now + lifetimeS })}.`;
      issued.push(token);
      issuedAt.push(Date.now());
      answer(200, { access_token: token, token_type: 'Bearer', expires_in: lifetimeS });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/oauth2/token`,
    issued,
    issuedAt,
    get away() {
      return away;
    },
    set away(value: boolean) {
      away = value;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
