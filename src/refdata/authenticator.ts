// Which credentials go to which root (see the Authentication section of the spec):
//   base          X-API-KEY, or a client-credentials bearer token when no API key is configured
//   auth          HTTP basic with the client id and secret (the token endpoint)
//   dataExchange  HTTP basic, plus X-Credential-Username (a declared header parameter)
//   identity      bearer token, plus X-Credential-Username
//   usage         X-Credential-Username only

import type { ResolvedClientOptions } from './options.ts';
import type { RootName } from './openapi-document.ts';
import { basicCredentials } from '../observability/secret-redactor.ts';
import type { ClientCredentialsTokenProvider } from './token-provider.ts';

export interface AttemptCredentials {
  headers: Record<string, string>;
  /** The bearer token sent, so a refusal can invalidate exactly that token. */
  bearerToken?: string;
}

export class Authenticator {
  readonly #credentials: ResolvedClientOptions['credentials'];
  readonly #tokens: ClientCredentialsTokenProvider | undefined;

  constructor(
    credentials: ResolvedClientOptions['credentials'],
    tokens: ClientCredentialsTokenProvider | undefined,
  ) {
    this.#credentials = credentials;
    this.#tokens = tokens;
  }

  /** Value of the X-Credential-Username header parameter the data exchange, identity and usage APIs require. */
  get credentialUsername(): string | undefined {
    return this.#credentials.credentialUsername;
  }

  async credentialsFor(root: RootName): Promise<AttemptCredentials> {
    const { apiKey, clientCredentials, dataExchangeBasicAuth } = this.#credentials;
    switch (root) {
      case 'base':
        return apiKey ? { headers: { 'x-api-key': apiKey } } : this.#bearer();
      case 'auth':
        return clientCredentials
          ? {
              headers: {
                authorization: `Basic ${basicCredentials(clientCredentials.clientId, clientCredentials.clientSecret)}`,
              },
            }
          : { headers: {} };
      case 'dataExchange':
        return dataExchangeBasicAuth
          ? {
              headers: {
                authorization: `Basic ${basicCredentials(dataExchangeBasicAuth.username, dataExchangeBasicAuth.password)}`,
              },
            }
          : { headers: {} };
      case 'identity':
        return this.#bearer();
      case 'usage':
        return { headers: {} };
    }
  }

  /**
   * Called when the server refused the credentials of an attempt. True when a bearer token was
   * dropped, so one more attempt with a fresh token is worth making.
   */
  refused(credentials: AttemptCredentials): boolean {
    if (credentials.bearerToken === undefined || !this.#tokens) return false;
    this.#tokens.invalidate(credentials.bearerToken);
    return true;
  }

  async #bearer(): Promise<AttemptCredentials> {
    // Options validation guarantees client credentials for every root that needs a bearer token.
    if (!this.#tokens) return { headers: {} };
    const token = await this.#tokens.getToken();
    return { headers: { authorization: `Bearer ${token}` }, bearerToken: token };
  }
}
