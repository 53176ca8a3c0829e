import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { OAuthError } from '../http/errors.js';
import { authenticateClient } from './client-auth.js';
import type { TokenResponse } from './tokens.js';
import { authorizationCodeGrant } from './grant-authorization-code.js';
import { clientCredentialsGrant } from './grant-client-credentials.js';
import { deviceCodeGrant } from './grant-device-code.js';
import type { Grant, TokenRequestBody } from './grant.js';
import { refreshTokenGrant } from './grant-refresh-token.js';

/** Every grant the token endpoint knows, by `grant_type`. */
export const grants: ReadonlyMap<string, Grant> = new Map(
  [authorizationCodeGrant, refreshTokenGrant, clientCredentialsGrant, deviceCodeGrant].map((g) => [
    g.name,
    g,
  ]),
);

/**
 * POST /oauth2/token: the grant is looked up, the client authenticated and its right to the grant
 * checked — `unsupported_grant_type` and `unauthorized_client` before any grant handler runs.
 */
export async function tokenEndpoint(
  ctx: AppContext,
  req: FastifyRequest,
  body: TokenRequestBody,
): Promise<TokenResponse> {
  if (!body.grant_type) throw new OAuthError('invalid_request', 'grant_type is required');
  const grant = grants.get(body.grant_type);
  if (!grant) throw new OAuthError('unsupported_grant_type', 'this grant type is not supported');
  const client = await authenticateClient(ctx, req, body, { idOnly: grant.clientIdOnly });
  if (!client.allowedGrantTypes.includes(grant.name))
    throw new OAuthError('unauthorized_client', 'this client may not use this grant type');
  const response = await grant.handler({ ctx, req, client, body });
  ctx.metrics.tokensIssued.inc({ grant: grant.name, app: client.clientId });
  return response;
}
