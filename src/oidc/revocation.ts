import type { AccessTokenCheck, AppContext } from '../context.js';
import { loadClient } from './clients.js';
import { cachedTokenState } from './user-cache.js';
import type { Tx } from './stores.js';

/** Revokes one family (a code's or a device authorization's tokens, with every rotation). */
export function revokeFamily(ctx: AppContext, familyId: string): Promise<void> {
  return ctx.stores.revocations.revokeFamilies(undefined, { familyId }, ctx.clock.now());
}

/** Revokes every token the user holds for one client (consent revoked), in `tx`. */
export function revokeGrantTokens(ctx: AppContext, tx: Tx, grant: { userId: string; clientId: string }) {
  return ctx.stores.revocations.revokeFamilies(tx, grant, ctx.clock.now());
}

/** Revokes every token of the user, and burns their unredeemed codes (account deletion), in `tx`. */
export async function revokeUserTokens(ctx: AppContext, tx: Tx, userId: string): Promise<void> {
  const now = ctx.clock.now();
  await ctx.stores.revocations.burnCodesOfUser(tx, userId, now);
  await ctx.stores.revocations.revokeFamilies(tx, { userId }, now);
}

/** Records an access token's jti as revoked until the token would have expired. */
export function revokeAccessToken(ctx: AppContext, jti: string, exp: number): Promise<void> {
  return ctx.stores.revocations.revokeAccessToken(undefined, jti, new Date(exp * 1000), ctx.clock.now());
}

/**
 * The issuer's check on every verified access token: its app is still live (from the client
 * cache), its jti is not revoked and its user (for user tokens) is not deleted — one query, or none
 * when this instance has both cached (src/oidc/user-cache.ts).
 */
export function revocationCheck(ctx: AppContext): AccessTokenCheck {
  return async (claims) => {
    const clientId = claims.client_id;
    const { jti, sub, exp } = claims;
    if (
      typeof clientId !== 'string' ||
      typeof jti !== 'string' ||
      typeof sub !== 'string' ||
      typeof exp !== 'number'
    )
      return false;
    if (!(await loadClient(ctx, clientId))) return false;
    // Client-credentials tokens carry the client id as sub (RFC 9068) and have no user.
    const userId = sub === clientId ? null : sub;
    const state = await cachedTokenState(ctx, jti, userId, exp);
    if (state.revoked) return false;
    return userId === null || state.live;
  };
}

/** Deletes what can no longer matter: expired codes, device codes, revocation records, jti records. */
export function sweepExpiredTokens(ctx: AppContext): Promise<void> {
  return ctx.stores.revocations.sweep(ctx.clock.now());
}
