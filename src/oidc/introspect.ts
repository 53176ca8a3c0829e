import type { AppContext } from '../context.js';
import { API_KEY_PREFIX } from '../http/auth.js';
import { sha256 } from '../lib/hash.js';
import { type Client, loadClient } from './clients.js';
import { findConsentGrant } from './consent.js';
import { looksLikeJwt, verifyAccessToken } from './tokens.js';

/** RFC 7662 response. Inactive is exactly `{ active: false }`. */
export interface IntrospectionResponse {
  active: boolean;
  scope?: string;
  client_id?: string;
  token_type?: string;
  exp?: number;
  iat?: number;
  sub?: string;
  iss?: string;
  aud?: string;
}

/**
 * Answers for a token the issuer does not mint itself (user API keys): an active introspection
 * object, or null when the token is not one of its kind or not active. `ip` is the introspecting
 * request's source address (a key's IP allowlist applies to it).
 */
export type Introspector = (token: string, request: { ip: string }) => Promise<IntrospectionResponse | null>;

const introspectors = new WeakMap<AppContext, Introspector[]>();

/** Registers an introspector for opaque tokens of another module (the users side's API keys). */
export function registerIntrospector(ctx: AppContext, fn: Introspector): void {
  const list = introspectors.get(ctx) ?? [];
  if (!list.includes(fn)) list.push(fn);
  introspectors.set(ctx, list);
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
  const row = await ctx.db
    .selectFrom('refresh_tokens')
    .innerJoin('users', 'users.id', 'refresh_tokens.user_id')
    .select([
      'refresh_tokens.client_id',
      'refresh_tokens.user_id',
      'refresh_tokens.scopes',
      'refresh_tokens.created_at',
      'refresh_tokens.expires_at',
    ])
    .where('refresh_tokens.token_hash', '=', sha256(token))
    .where('refresh_tokens.consumed_at', 'is', null)
    .where('refresh_tokens.revoked_at', 'is', null)
    .where('refresh_tokens.expires_at', '>', now)
    .where('users.deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return null;
  const owner = await sameBrand(ctx, caller, row.client_id);
  if (!owner) return INACTIVE;
  return {
    active: true,
    scope: row.scopes.join(' '),
    client_id: row.client_id,
    token_type: 'refresh_token',
    exp: Math.floor(row.expires_at.getTime() / 1000),
    iat: Math.floor(row.created_at.getTime() / 1000),
    sub: row.user_id,
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
  return !!(await findConsentGrant(ctx.db, userId, caller.appId));
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
    for (const fn of introspectors.get(ctx) ?? []) {
      const out = await fn(token, { ip });
      if (out?.active) return (await userConsentedTo(ctx, out.sub, caller)) ? out : INACTIVE;
    }
    return INACTIVE;
  }
  if (looksLikeJwt(token)) return introspectAccessToken(ctx, caller, token);
  return (await introspectRefreshToken(ctx, caller, token)) ?? INACTIVE;
}

/**
 * Plugs in the users side's `introspectApiKey` when that module is present. The specifier is not a
 * literal so the issuer builds and runs without the module.
 */
export async function registerApiKeyIntrospector(ctx: AppContext): Promise<void> {
  const specifier = '../modules/api-keys/api-keys.service.js';
  let mod: {
    introspectApiKey?: (c: AppContext, key: string, ip: string) => Promise<IntrospectionResponse | null>;
  };
  try {
    mod = await import(specifier);
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') return;
    throw err;
  }
  const fn = mod.introspectApiKey;
  if (typeof fn === 'function') registerIntrospector(ctx, (token, request) => fn(ctx, token, request.ip));
}
