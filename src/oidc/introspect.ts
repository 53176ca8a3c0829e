import type { AppContext } from '../context.js';
import { API_KEY_PREFIX } from '../http/auth.js';
import { sha256 } from '../lib/hash.js';
import { type Client, loadClient } from './clients.js';
import { consentGrantOf } from './consent.js';
import type { IntrospectionResponse, Introspector } from './stores.js';
import { looksLikeJwt, verifyAccessToken } from './tokens.js';

export type { IntrospectionResponse, Introspector };

/** Adds an introspector for opaque tokens of another module (the wiring passes the API keys' one). */
export function registerIntrospector(ctx: AppContext, fn: Introspector): void {
  const list = ctx.stores.introspectors;
  if (!list.includes(fn)) list.push(fn);
}

const INACTIVE: IntrospectionResponse = { active: false };

/**
 * Another client may introspect a token only when both belong to the same brand (RFC 7662 §4
 * lets the server restrict this): a brand's resource servers can check that brand's tokens,
 * and nobody learns about another brand's users.
 */
async function sameBrand(ctx: AppContext, caller: Client, clientId: string): Promise<Client | null> {
  if (clientId === caller.clientId) return caller;
  const owner = await loadClient(ctx, clientId);
  return owner && owner.brandId === caller.brandId ? owner : null;
}

async function introspectAccessToken(ctx: AppContext, caller: Client, token: string) {
  const claims = await verifyAccessToken(ctx, token);
  if (!claims) return INACTIVE;
  const owner = await sameBrand(ctx, caller, claims.client_id);
  if (!owner) return INACTIVE;
  return {
    active: true,
    scope: typeof claims.scope === 'string' ? claims.scope : '',
    client_id: claims.client_id,
    token_type: 'Bearer',
    exp: claims.exp,
    iat: claims.iat,
    sub: claims.sub,
    iss: ctx.config.issuer,
    aud: typeof claims.aud === 'string' ? claims.aud : owner.brandSlug,
  } satisfies IntrospectionResponse;
}

async function introspectRefreshToken(ctx: AppContext, caller: Client, token: string) {
  const now = ctx.clock.now();
  const row = await ctx.stores.tokens.findActiveRefresh(sha256(token), now);
  if (!row) return null;
  const owner = await sameBrand(ctx, caller, row.clientId);
  if (!owner) return INACTIVE;
  return {
    active: true,
    scope: row.scopes.join(' '),
    client_id: row.clientId,
    token_type: 'refresh_token',
    exp: Math.floor(row.expiresAt.getTime() / 1000),
    iat: Math.floor(row.createdAt.getTime() / 1000),
    sub: row.userId,
    iss: ctx.config.issuer,
    aud: owner.brandSlug,
  } satisfies IntrospectionResponse;
}

/**
 * A user's own credential (an API key) is shown active only to an app the user has granted consent
 * to: the user chose to share their account with that app, so it may learn that the key is theirs.
 * Every other app, even of the same brand, learns nothing.
 */
async function userConsentedTo(
  ctx: AppContext,
  userId: string | undefined,
  caller: Client,
): Promise<boolean> {
  if (!userId) return false;
  return !!(await consentGrantOf(ctx, userId, caller.appId));
}

/**
 * POST /oauth2/introspect (RFC 7662), after client authentication — of a confidential client only
 * (§2.1; the route refuses public ones). What a caller may see active:
 * - access tokens and refresh tokens of its own brand (a console token only to a confidential app
 *   of the console brand, which does not exist unless an operator makes one);
 * - user API keys of users who granted the caller consent, and for a key with an IP allowlist only
 *   when the introspection comes from an allowed address.
 * Everything else is `{ active: false }`.
 */
export async function introspectToken(
  ctx: AppContext,
  caller: Client,
  token: string,
  ip: string,
): Promise<IntrospectionResponse> {
  if (!caller.isConfidential) return INACTIVE;
  if (token.startsWith(API_KEY_PREFIX)) {
    for (const fn of ctx.stores.introspectors) {
      const out = await fn(token, { ip });
      if (out?.active) return (await userConsentedTo(ctx, out.sub, caller)) ? out : INACTIVE;
    }
    return INACTIVE;
  }
  if (looksLikeJwt(token)) return introspectAccessToken(ctx, caller, token);
  return (await introspectRefreshToken(ctx, caller, token)) ?? INACTIVE;
}
