// Credentials per root, as the spec's Authentication section describes them:
//   base          X-API-KEY, or an OAuth bearer token from the token endpoint
//   auth          HTTP basic with the client id and secret
//   dataExchange  HTTP basic (X-Credential-Username is a required parameter, checked by validation)
//   identity      bearer token (plus X-Credential-Username, likewise)
//   usage         nothing beyond X-Credential-Username
// Missing credentials answer 401; wrong or expired ones 403 (the spec: a wrong token is 403).
// The check names the principal, which stored resources record as createdBy.

import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { RootName } from '../../refdata/index.ts';
import { SandboxHttpError } from '../errors.ts';
import type { ResolvedSandboxOptions } from '../options.ts';
import type { Faults } from '../state/faults.ts';
import type { TokenStore } from '../state/token-store.ts';

/** Who a request authenticated with the API key is; the key itself is a secret. */
const API_KEY_PRINCIPAL = 'api-key-user';
const ANONYMOUS = 'anonymous';

const unauthorized = (message: string): SandboxHttpError =>
  new SandboxHttpError(401, 'UNAUTHORIZED', message);
const forbidden = (message: string): SandboxHttpError => new SandboxHttpError(403, 'FORBIDDEN', message);

const sameText = (given: string, expected: string): boolean => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

type Scheme =
  { kind: 'basic'; user: string; password: string } | { kind: 'bearer'; token: string } | undefined;

function authorizationOf(request: FastifyRequest): Scheme {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const [scheme = '', value = ''] = header.split(' ', 2);
  if (scheme.toLowerCase() === 'bearer') return { kind: 'bearer', token: value };
  if (scheme.toLowerCase() === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon >= 0)
      return { kind: 'basic', user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  return undefined;
}

export class Authentication {
  readonly #options: Readonly<ResolvedSandboxOptions>;
  readonly #tokens: TokenStore;
  readonly #faults: Faults;

  constructor(options: Readonly<ResolvedSandboxOptions>, tokens: TokenStore, faults: Faults) {
    this.#options = options;
    this.#tokens = tokens;
    this.#faults = faults;
  }

  /** The principal of the request; throws SandboxHttpError 401 or 403 when it may not reach the root. */
  check(root: RootName, request: FastifyRequest): string {
    switch (root) {
      case 'base':
        return this.#checkBase(request);
      case 'auth':
        // OAuth answers a wrong client with 401 invalid_client, not 403.
        return this.#checkBasic(
          request,
          this.#options.clientId,
          this.#options.clientSecret,
          'client credentials',
          unauthorized,
        );
      case 'dataExchange': {
        const { username, password } = this.#options.dataExchange;
        return this.#checkBasic(request, username, password, 'data exchange credentials', forbidden);
      }
      case 'identity':
        return this.#checkBearer(authorizationOf(request));
      case 'usage':
        return ANONYMOUS;
    }
  }

  #checkBase(request: FastifyRequest): string {
    const apiKey = request.headers['x-api-key'];
    const authorization = authorizationOf(request);
    if (typeof apiKey !== 'string' && authorization === undefined)
      throw unauthorized('X-API-KEY or a bearer token is required');
    if (this.#faults.settings.credentialsRevoked) throw forbidden('credentials revoked (injected)');
    if (typeof apiKey !== 'string') return this.#checkBearer(authorization);
    if (!sameText(apiKey, this.#options.apiKey)) throw forbidden('wrong API key');
    return API_KEY_PRINCIPAL;
  }

  #checkBearer(authorization: Scheme): string {
    if (authorization?.kind !== 'bearer') throw unauthorized('a bearer token is required');
    if (!this.#tokens.isValid(authorization.token)) throw forbidden('wrong or expired access token');
    return this.#options.clientId;
  }

  #checkBasic(
    request: FastifyRequest,
    user: string,
    password: string,
    what: string,
    refuse: (message: string) => SandboxHttpError,
  ): string {
    const authorization = authorizationOf(request);
    if (authorization?.kind !== 'basic') throw unauthorized(`HTTP basic ${what} are required`);
    if (!sameText(authorization.user, user) || !sameText(authorization.password, password)) {
      throw refuse(`wrong ${what}`);
    }
    return user;
  }
}
