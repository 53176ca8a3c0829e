import { createHash, sign as cryptoSign } from 'node:crypto';
import { defaults } from '../config/defaults.js';
import type { AppContext } from '../context.js';
import { OAuthError } from '../http/errors.js';
import { BoundedCache } from '../lib/bounded-cache.js';
import { sha256 } from '../lib/hash.js';
import { newId, newSecret } from '../lib/ids.js';
import type { Client } from './clients.js';
import type { GrantType } from './discovery.js';
import { GATES_SCOPE } from './gates.js';
import { verifyJwt } from './jwt.js';
import type { Tx, UserProfileRow } from './stores.js';

/** The token endpoint's success body (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  refresh_token?: string;
  id_token?: string;
}

/** The user side of a grant: who, since when, and the token family the grant belongs to. */
export interface GrantUser {
  id: string;
  /** When the user authenticated (unix seconds). */
  authTime: number;
  /** The family of every token issued from one code or device authorization (and its rotations). */
  familyId: string;
  nonce?: string;
  sessionId?: string | null;
}

export interface IssueTokensInput {
  client: Client;
  grant: GrantType;
  scopes: string[];
  /** Absent for client credentials: the token has no user and `sub` is the client id (RFC 9068). */
  user?: GrantUser;
  /** `token.refreshed` instead of `token.issued`. */
  refreshed?: boolean;
  /**
   * What the gate policies decided (decideGates): the tokens carry `scopes` (the decision's), the
   * refresh token keeps `grantScopes` (so a scope dropped today can come back at a later refresh),
   * `token.refreshed` reports `dropped`, and the `gates` scope adds the passed policies as a claim.
   */
  gates?: { grantScopes: string[]; dropped: string[]; passedPolicies: string[] };
  /**
   * The access token's jti when its record (and the client in the user's session) was written by the
   * statement that consumed the grant's code (`CodeStore.consumeMatching` with a token).
   */
  recordedJti?: string;
}

export type UserProfile = UserProfileRow;

/** A live user's profile claims source; null when the user is gone or in the deletion window. */
export function loadUserProfile(ctx: AppContext, userId: string): Promise<UserProfile | null> {
  return ctx.stores.accounts.profile(userId);
}

/**
 * The profile claims a scope set grants, only those with values. The ID token also gets `locale`
 * and, with the `email` scope and a known address, `email`/`email_verified`; /userinfo never does.
 */
export function profileClaims(
  profile: UserProfile,
  scopes: readonly string[],
  opts: { idToken: boolean },
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (scopes.includes('profile')) {
    if (profile.givenName) out.given_name = profile.givenName;
    if (profile.familyName) out.family_name = profile.familyName;
    if (profile.username) out.preferred_username = profile.username;
    if (profile.picture) out.picture = profile.picture;
    if (opts.idToken && profile.locale) out.locale = profile.locale;
  }
  if (opts.idToken && scopes.includes('email') && profile.email) {
    out.email = profile.email;
    out.email_verified = profile.emailVerified;
  }
  return out;
}

/** A wallet as the `wallets` claim lists it. */
export interface WalletClaim {
  address: string;
  chain: 'solana';
  isPrimary: boolean;
}

/**
 * The `wallet` scope's claims (ID token and /userinfo alike): `wallet_address`, the primary Solana
 * address (absent when there is none), and `wallets`, every linked one (`[]` when none). Nothing
 * without the scope.
 */
export async function walletClaims(
  ctx: AppContext,
  userId: string,
  scopes: readonly string[],
): Promise<{ wallet_address?: string; wallets?: WalletClaim[] }> {
  if (!scopes.includes('wallet')) return {};
  const rows = await ctx.stores.accounts.wallets(userId);
  const wallets = rows.map((w) => ({ address: w.address, chain: 'solana' as const, isPrimary: w.isPrimary }));
  const primary = wallets.find((w) => w.isPrimary);
  return { ...(primary ? { wallet_address: primary.address } : {}), wallets };
}

/** OIDC Core §3.1.3.6: the left half of the SHA-256 of the access token, base64url. */
function atHash(accessToken: string): string {
  const digest = createHash('sha256').update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

const b64json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * RS256 compact JWS with the active key, `iat`/`exp` from the injectable clock. Same output as
 * `signJwt`, but signed by `crypto.sign` on the libuv pool with the KeyObject as it is: jose's
 * WebCrypto path converts the key on every call and costs about twice the CPU per token.
 */
export async function signRs256(
  ctx: AppContext,
  claims: Record<string, unknown>,
  opts: { ttl: number; typ?: string },
): Promise<string> {
  const key = await ctx.keys.signingKey();
  const iat = ctx.clock.nowSec();
  const input = `${b64json({ alg: 'RS256', kid: key.kid, typ: opts.typ ?? 'JWT' })}.${b64json({ ...claims, iat, exp: iat + opts.ttl })}`;
  const signature = await new Promise<Buffer>((resolve, reject) =>
    cryptoSign('sha256', Buffer.from(input), key.privateKey, (err, sig) =>
      err ? reject(err) : resolve(sig),
    ),
  );
  return `${input}.${signature.toString('base64url')}`;
}

/** DESIGN §3: with the `gates` scope, `gates: [policyId, …]` (the passed policies, [] when none). */
function gatesClaim(input: IssueTokensInput): Record<string, unknown> {
  if (!input.user || !input.scopes.includes(GATES_SCOPE)) return {};
  return { gates: input.gates?.passedPolicies ?? [] };
}

function signAccessToken(
  ctx: AppContext,
  client: Client,
  sub: string,
  scopes: string[],
  jti: string,
  authTime?: number,
  extra?: Record<string, unknown>,
) {
  const claims: Record<string, unknown> = {
    iss: ctx.config.issuer,
    sub,
    aud: client.brandSlug,
    // Brand slugs are unique across the service; `org` and `client_id` let a resource server also
    // pin the org and the apps it accepts (DESIGN.md §3 "Brand audiences").
    org: client.orgSlug,
    client_id: client.clientId,
    scope: scopes.join(' '),
    jti,
  };
  if (authTime !== undefined) claims.auth_time = authTime;
  if (extra) Object.assign(claims, extra);
  return signRs256(ctx, claims, { ttl: defaults.accessTokenTtl, typ: 'at+jwt' });
}

/**
 * Issues the tokens of one successful grant, used by every grant handler. Client credentials: one
 * access token, its `token.issued` event group-committed with concurrent ones. User grants: the
 * access token (recorded by jti in its family), an ID token when `openid` was granted, a rotated
 * refresh token when `offline_access` was granted and the app may refresh; rows and event commit in
 * one transaction before the response leaves.
 */
export async function issueTokens(ctx: AppContext, input: IssueTokensInput): Promise<TokenResponse> {
  const { client, scopes, user } = input;
  const jti = input.recordedJti ?? newId();
  if (!user) {
    const accessToken = await signAccessToken(ctx, client, client.clientId, scopes, jti);
    if (await ctx.stores.events.wanted(undefined, client.orgId, 'token.issued'))
      await ctx.stores.events.recordBatched({
        orgId: client.orgId,
        actorUserId: null,
        type: 'token.issued',
        data: { user: null, app: client.clientId, scopes, grant: input.grant },
      });
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: defaults.accessTokenTtl,
      scope: scopes.join(' '),
    };
  }
  const profile = await loadUserProfile(ctx, user.id);
  if (!profile) throw new OAuthError('invalid_grant', 'the user of this grant no longer exists');
  const accessToken = await signAccessToken(
    ctx,
    client,
    user.id,
    scopes,
    jti,
    user.authTime,
    gatesClaim(input),
  );
  const response: TokenResponse = {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: defaults.accessTokenTtl,
    scope: scopes.join(' '),
  };
  if (scopes.includes('openid'))
    response.id_token = await signIdToken(ctx, input, user, profile, accessToken);
  // A refresh rotates the grant's refresh token whatever scope these tokens were narrowed to: a
  // refresh asking for less than `offline_access` must not end the grant.
  const offline = (input.refreshed ? (input.gates?.grantScopes ?? scopes) : scopes).includes(
    'offline_access',
  );
  const refreshToken = offline && client.allowedGrantTypes.includes('refresh_token') ? newSecret() : null;
  if (refreshToken) response.refresh_token = refreshToken;
  await recordUserGrant(ctx, input, user, jti, refreshToken);
  return response;
}

async function signIdToken(
  ctx: AppContext,
  input: IssueTokensInput,
  user: GrantUser,
  profile: UserProfile,
  accessToken: string,
): Promise<string> {
  const claims: Record<string, unknown> = {
    iss: ctx.config.issuer,
    sub: user.id,
    aud: input.client.clientId,
    auth_time: user.authTime,
    at_hash: atHash(accessToken),
    ...profileClaims(profile, input.scopes, { idToken: true }),
    ...(await walletClaims(ctx, user.id, input.scopes)),
    ...gatesClaim(input),
  };
  if (user.nonce) claims.nonce = user.nonce;
  // The browser session the grant came from (OpenID Back-Channel Logout 1.0 §2.1): logout tokens
  // name it, and an id_token_hint at /oauth2/logout points at it.
  if (user.sessionId) claims.sid = user.sessionId;
  return signRs256(ctx, claims, { ttl: defaults.idTokenTtl });
}

/** The access token's jti record, the refresh token and the `token.*` event, in one transaction. */
async function recordUserGrant(
  ctx: AppContext,
  input: IssueTokensInput,
  user: GrantUser,
  jti: string,
  refreshToken: string | null,
): Promise<void> {
  const { client, scopes } = input;
  const now = ctx.clock.now();
  const { tokens, revocations, events, sessionClients } = ctx.stores;
  const eventType = input.refreshed ? 'token.refreshed' : 'token.issued';
  const accessToken = {
    jti,
    familyId: user.familyId,
    clientId: client.clientId,
    userId: user.id,
    expiresAt: new Date(now.getTime() + defaults.accessTokenTtl * 1000),
    sessionId: user.sessionId ?? null,
  };
  const record = async (tx: Tx | undefined) => {
    if (input.recordedJti) return;
    await revocations.recordAccessToken(tx, accessToken);
    // Logout tells every app that was issued tokens in the session (code exchange or refresh).
    if (user.sessionId) await sessionClients.record(tx, user.sessionId, client.clientId, now);
  };
  // Nothing else to write (no refresh token, no event wanted): two statements need no transaction —
  // an access token's record without its session's app is only a token that was never answered.
  if (!refreshToken && !(await events.wanted(undefined, client.orgId, eventType))) return record(undefined);
  return ctx.stores.transaction(async (tx) => {
    await record(tx);
    if (refreshToken) {
      const written = await tokens.insertRefresh(tx, {
        id: newId('rt_'),
        token_hash: sha256(refreshToken),
        family_id: user.familyId,
        client_id: client.clientId,
        user_id: user.id,
        scopes: input.gates?.grantScopes ?? scopes,
        auth_time: user.authTime,
        session_id: user.sessionId ?? null,
        expires_at: new Date(now.getTime() + defaults.refreshTokenTtl * 1000),
        created_at: now,
        consumed_at: null,
        revoked_at: null,
      });
      // Revoked (reuse detected, a logout) between the code's or the old refresh token's redemption
      // and here: nothing is answered; this transaction's access-token record goes with it. A code's
      // family has no refresh token to mark yet: its revocation shows on the access token recorded
      // with the code's consumption (never handed out, so nobody else could have revoked it).
      if (!written || (await revocations.isRevoked(tx, jti)))
        throw new OAuthError('invalid_grant', 'this grant was revoked or its session has ended');
    }
    if (!(await events.wanted(tx, client.orgId, eventType))) return;
    await events.record(tx, {
      orgId: client.orgId,
      actorUserId: user.id,
      action: eventType,
      resourceType: 'app',
      resourceId: client.clientId,
      auditless: true,
      events: [
        input.refreshed
          ? {
              type: 'token.refreshed',
              // The gated scopes of the grant left out of these tokens, when there are any.
              data: {
                user: user.id,
                app: client.clientId,
                scopes,
                ...(input.gates?.dropped.length ? { droppedScopes: input.gates.dropped } : {}),
              },
            }
          : {
              type: 'token.issued',
              data: { user: user.id, app: client.clientId, scopes, grant: input.grant },
            },
      ],
    });
  });
}

/** The claims of an access token that passed `verifyAccessToken`. */
export type AccessTokenClaims = Record<string, unknown> & {
  sub: string;
  client_id: string;
  jti: string;
  exp: number;
  iat: number;
};

/**
 * Verifies an access token as the issuer does: RS256 by one of our keys, `typ` at+jwt (so an ID
 * token is refused), our issuer, unexpired, of `audience` when given (any brand otherwise), and
 * passing every registered check (revoked jti, disabled app, deleted user). Null when any of it fails.
 * The one access-token verifier (`ctx.verifyAccessToken`; REST's `authenticate` uses it too).
 */
export async function verifyAccessToken(
  ctx: AppContext,
  token: string,
  opts?: { audience?: string },
): Promise<AccessTokenClaims | null> {
  const claims = await verifiedClaims(ctx, token, opts?.audience);
  if (!claims) return null;
  for (const check of ctx.hooks.accessTokenChecks) {
    if (!(await check(claims))) return null;
  }
  return claims;
}

/** An access token's claims once its signature and claims checked out, with the key set then. */
interface VerifiedToken {
  claims: AccessTokenClaims;
  jwks: string;
}

/** Per key store (one per app): verified access tokens by audience and the token's SHA-256. */
const verifiedTokens = new WeakMap<object, BoundedCache<VerifiedToken>>();

/**
 * The signature and claims part of `verifyAccessToken`, remembered per instance: an RS256 check and
 * jose's parsing were about a third of a `/userinfo` request's CPU, and a client sends the same token
 * until it expires. Only tokens that verified are kept (a forged one cannot fill the cache), under
 * their SHA-256 (no token text is kept), until `min(exp, 60 s)`, and only while the key set is the one
 * they were verified with: a key leaving the set refuses its tokens here as it does below. The
 * per-request checks (revoked jti, disabled app, deleted user) are not cached by this.
 */
async function verifiedClaims(
  ctx: AppContext,
  token: string,
  audience: string | undefined,
): Promise<AccessTokenClaims | null> {
  let cache = verifiedTokens.get(ctx.keys);
  if (!cache) {
    cache = new BoundedCache(defaults.verifiedTokenCacheMax);
    verifiedTokens.set(ctx.keys, cache);
  }
  const key = `${audience ?? ''} ${sha256(token)}`;
  const jwks = await ctx.keys.jwks();
  const now = ctx.clock.nowMs();
  const hit = cache.get(key, now);
  if (hit && hit.jwks === jwks && now < hit.claims.exp * 1000) return { ...hit.claims };
  const claims = await verifyJwt(ctx.keys, ctx.clock, token, {
    issuer: ctx.config.issuer,
    audience,
    typ: 'at+jwt',
  });
  if (
    !claims ||
    typeof claims.sub !== 'string' ||
    typeof claims.client_id !== 'string' ||
    typeof claims.jti !== 'string' ||
    typeof claims.exp !== 'number' ||
    typeof claims.iat !== 'number'
  )
    return null;
  const verified = claims as AccessTokenClaims;
  cache.set(key, { claims: { ...verified }, jwks }, Math.min(verified.exp * 1000, now + 60_000));
  return verified;
}

/** Whether a string has the shape of a compact JWS (three base64url parts). */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}
