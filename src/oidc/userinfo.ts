import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { parseBearer } from '../http/auth.js';
import { invalidToken, unauthorized } from '../http/errors.js';
import {
  type WalletClaim,
  loadUserProfile,
  profileClaims,
  verifyAccessToken,
  walletClaims,
} from './tokens.js';

export interface UserinfoResponse {
  sub: string;
  preferred_username?: string;
  given_name?: string;
  family_name?: string;
  picture?: string;
  wallet_address?: string;
  wallets?: WalletClaim[];
}

/**
 * The access token: `Authorization: Bearer`, or on POST the form field `access_token` (RFC 6750
 * §2.2, OIDC Core §5.3.1); both at once is refused (RFC 6750 §2: one method per request).
 */
function bearerToken(req: FastifyRequest): string {
  const body = req.method === 'POST' ? (req.body as Record<string, unknown> | undefined) : undefined;
  const fromBody = typeof body?.access_token === 'string' ? body.access_token : undefined;
  const isForm = /^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '');
  if (fromBody !== undefined) {
    if (req.headers.authorization !== undefined || !isForm)
      throw invalidToken('send the access token in the Authorization header or the form body, not both');
    return fromBody;
  }
  const token = parseBearer(req.headers.authorization);
  if (token === undefined) throw unauthorized('a Bearer access token is required');
  if (token === null) throw invalidToken('expected "Authorization: Bearer <access token>"');
  return token;
}

/**
 * GET/POST /userinfo: an access token of any brand, for a live user of a live app. Profile claims
 * with the `profile` scope, only those with values; `email` never (interface).
 */
export async function userinfo(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<UserinfoResponse> {
  const claims = await verifyAccessToken(ctx, bearerToken(req));
  // Client-credentials tokens (sub = client id) have no user to describe.
  if (!claims || claims.sub === claims.client_id) throw invalidToken();
  await ctx.rateLimits.consume('userinfo', claims.jti, reply);
  const profile = await loadUserProfile(ctx, claims.sub);
  if (!profile) throw invalidToken();
  const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
  return {
    sub: profile.id,
    ...profileClaims(profile, scopes, { idToken: false }),
    ...(await walletClaims(ctx, profile.id, scopes)),
  };
}
