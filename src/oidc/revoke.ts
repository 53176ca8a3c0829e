import type { AppContext } from '../context.js';
import { sha256 } from '../lib/hash.js';
import type { Client } from './clients.js';
import { verifyJwt } from './jwt.js';
import { revokeAccessToken, revokeFamily } from './revocation.js';
import { looksLikeJwt } from './tokens.js';

async function revokeAsAccessToken(ctx: AppContext, client: Client, token: string): Promise<boolean> {
  if (!looksLikeJwt(token)) return false;
  const claims = await verifyJwt(ctx.keys, ctx.clock, token, { issuer: ctx.config.issuer, typ: 'at+jwt' });
  // Expired or foreign tokens need nothing; another client's token is left alone (RFC 7009 §2.1).
  if (!claims || typeof claims.jti !== 'string' || typeof claims.exp !== 'number') return false;
  if (claims.client_id === client.clientId) await revokeAccessToken(ctx, claims.jti, claims.exp);
  return true;
}

async function revokeAsRefreshToken(ctx: AppContext, client: Client, token: string): Promise<boolean> {
  const row = await ctx.stores.tokens.findRefresh(sha256(token));
  if (!row) return false;
  // The whole family goes, with the access tokens issued in it.
  if (row.client_id === client.clientId) await revokeFamily(ctx, row.family_id);
  return true;
}

/**
 * POST /oauth2/revoke (RFC 7009), after client authentication. Answers nothing: whether the token
 * existed, was someone else's or was already revoked is not the caller's business. The hint only
 * orders the lookups.
 */
export async function revokeToken(
  ctx: AppContext,
  client: Client,
  token: string,
  hint?: string,
): Promise<void> {
  if (hint === 'refresh_token') {
    if (!(await revokeAsRefreshToken(ctx, client, token))) await revokeAsAccessToken(ctx, client, token);
    return;
  }
  if (!(await revokeAsAccessToken(ctx, client, token))) await revokeAsRefreshToken(ctx, client, token);
}
