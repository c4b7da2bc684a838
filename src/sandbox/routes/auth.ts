// The OAuth 2.0 token endpoint (client credentials). Basic client authentication is checked
// by the authentication hook and grant_type by the document's validator, so what is left is
// issuing the token and counting the request.

import type { FastifyInstance } from 'fastify';
import { operationRoute } from '../http/operation-route.ts';
import type { SandboxState } from '../state/sandbox-state.ts';

export function registerAuthRoutes(app: FastifyInstance, state: SandboxState): void {
  operationRoute(app, 'requestToken', () => {
    const token = state.tokens.issue();
    state.stats.add('tokensIssued');
    return { access_token: token.accessToken, expires_in: token.expiresInSeconds, token_type: 'Bearer' };
  });
}
