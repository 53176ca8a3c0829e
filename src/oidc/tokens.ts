import { createHash, sign as cryptoSign } from 'node:crypto';
import { defaults } from '../config/defaults.js';
import type { AppContext } from '../context.js';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database, Db, Executor } from '../db/schema.js';
import type { EventType } from '../events/catalog.js';
import { isEventWanted, recordMutation } from '../events/outbox.js';
import { OAuthError } from '../http/errors.js';
import type { Clock } from '../lib/clock.js';
import { sha256 } from '../lib/hash.js';
import { newId, newSecret } from '../lib/ids.js';
import { fileUrl } from '../modules/files/files.service.js';
import type { Client } from './clients.js';
import type { GrantType } from './discovery.js';
import { verifyJwt } from './jwt.js';

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
}

export interface UserProfile {
  id: string;
  username: string | null;
  givenName: string | null;
  familyName: string | null;
  picture: string | null;
  locale: string | null;
  email: string | null;
  emailVerified: boolean;
}

/** A live user's profile claims source; null when the user is gone or in the deletion window. */
export async function loadUserProfile(ctx: AppContext, userId: string): Promise<UserProfile | null> {
  const row = await ctx.db
    .selectFrom('users')
    .leftJoin('files', 'files.id', 'users.profile_picture_id')
    .select([
      'users.id',
      'users.username',
      'users.first_name',
      'users.last_name',
      'users.preferred_language',
      'users.email',
      'users.email_verified',
      'users.external_profile_picture_url',
      'files.file_key',
    ])
    .where('users.id', '=', userId)
    .where('users.deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return null;
  return {
    id: row.id,
    username: row.username,
    givenName: row.first_name,
    familyName: row.last_name,
    // An uploaded picture is the user's own choice; the provider's picture is the fallback.
    picture: row.file_key ? fileUrl(ctx.config, row.file_key) : row.external_profile_picture_url,
    locale: row.preferred_language,
    email: row.email,
    emailVerified: row.email_verified,
  };
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

function signAccessToken(
  ctx: AppContext,
  client: Client,
  sub: string,
  scopes: string[],
  jti: string,
  authTime?: number,
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
  const jti = newId();
  if (!user) {
    const accessToken = await signAccessToken(ctx, client, client.clientId, scopes, jti);
    if (await isEventWanted(ctx.db, client.orgId, 'token.issued'))
      await tokenEvents(ctx).record({
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

  const wantsIdToken = scopes.includes('openid');
  const profile = await loadUserProfile(ctx, user.id);
  if (!profile) throw new OAuthError('invalid_grant', 'the user of this grant no longer exists');
  const accessToken = await signAccessToken(ctx, client, user.id, scopes, jti, user.authTime);
  const response: TokenResponse = {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: defaults.accessTokenTtl,
    scope: scopes.join(' '),
  };
  if (wantsIdToken) {
    const claims: Record<string, unknown> = {
      iss: ctx.config.issuer,
      sub: user.id,
      aud: client.clientId,
      auth_time: user.authTime,
      at_hash: atHash(accessToken),
      ...profileClaims(profile, scopes, { idToken: true }),
    };
    if (user.nonce) claims.nonce = user.nonce;
    response.id_token = await signRs256(ctx, claims, { ttl: defaults.idTokenTtl });
  }
  const refreshToken =
    scopes.includes('offline_access') && client.allowedGrantTypes.includes('refresh_token')
      ? newSecret()
      : null;
  if (refreshToken) response.refresh_token = refreshToken;

  const now = ctx.clock.now();
  await ctx.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('access_tokens')
      .values({
        jti,
        family_id: user.familyId,
        client_id: client.clientId,
        user_id: user.id,
        expires_at: new Date(now.getTime() + defaults.accessTokenTtl * 1000),
      })
      .execute();
    if (refreshToken) {
      await trx
        .insertInto('refresh_tokens')
        .values({
          id: newId('rt_'),
          token_hash: sha256(refreshToken),
          family_id: user.familyId,
          client_id: client.clientId,
          user_id: user.id,
          scopes,
          auth_time: user.authTime,
          session_id: user.sessionId ?? null,
          expires_at: new Date(now.getTime() + defaults.refreshTokenTtl * 1000),
          created_at: now,
          consumed_at: null,
          revoked_at: null,
        })
        .execute();
    }
    const eventType = input.refreshed ? 'token.refreshed' : 'token.issued';
    if (!(await isEventWanted(trx, client.orgId, eventType))) return;
    await recordMutation(trx, ctx.clock, {
      orgId: client.orgId,
      actorUserId: user.id,
      action: eventType,
      resourceType: 'app',
      resourceId: client.clientId,
      auditless: true,
      events: [
        input.refreshed
          ? { type: 'token.refreshed', data: { user: user.id, app: client.clientId, scopes } }
          : {
              type: 'token.issued',
              data: { user: user.id, app: client.clientId, scopes, grant: input.grant },
            },
      ],
    });
  });
  return response;
}

interface PendingEvent {
  orgId: string;
  actorUserId: string | null;
  type: EventType;
  data: Record<string, unknown>;
}

/**
 * Group commit for `token.*` events of grants that write nothing else (client credentials): each
 * request waits until its event is committed, but the events that arrive while a transaction runs
 * share the next one, so a burst costs a transaction per batch rather than per token. A few batches
 * may be in flight at once (`lanes`): writing is bound by database round trips, not by CPU.
 */
export class TokenEventWriter {
  private queue: Array<PendingEvent & { done: (err?: unknown) => void }> = [];
  private active = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly lanes = 4,
    private readonly maxBatch = 8,
  ) {}

  record(event: PendingEvent): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ ...event, done: (err) => (err ? reject(err) : resolve()) });
      if (this.active < this.lanes) void this.lane();
    });
  }

  private async lane(): Promise<void> {
    this.active++;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          await this.db.transaction().execute((trx) => this.write(trx, batch));
          for (const e of batch) e.done();
        } catch (err) {
          for (const e of batch) e.done(err);
        }
      }
    } finally {
      this.active--;
    }
  }

  private async write(trx: Executor, batch: PendingEvent[]): Promise<void> {
    const groups = new Map<string, PendingEvent[]>();
    for (const e of batch) {
      const key = `${e.orgId}\u0000${e.actorUserId ?? ''}`;
      const list = groups.get(key);
      if (list) list.push(e);
      else groups.set(key, [e]);
    }
    for (const list of groups.values()) {
      await recordMutation(trx as never, this.clock, {
        orgId: list[0].orgId,
        actorUserId: list[0].actorUserId,
        action: 'token.issued',
        resourceType: 'app',
        resourceId: String(list[0].data.app),
        auditless: true,
        events: list.map((e) => ({ type: e.type, data: e.data })),
      });
    }
  }
}

const writers = new WeakMap<AppContext, TokenEventWriter>();

/** Connections of the event writer's own pool on PostgreSQL: one per lane. */
const EVENT_LANES = 8;

/**
 * This context's event writer. On PostgreSQL it has its own small pool, one connection per lane,
 * so a burst of token events neither waits for nor starves the request pool; the embedded
 * database has one connection and shares it.
 */
export function tokenEvents(ctx: AppContext): TokenEventWriter {
  let w = writers.get(ctx);
  if (!w) {
    if (ctx.database.kind === 'postgres' && ctx.config.databaseUrl) {
      const pool = new pg.Pool({
        connectionString: ctx.config.databaseUrl,
        max: EVENT_LANES,
        ...(ctx.config.databaseSchema ? { options: `-c search_path=${ctx.config.databaseSchema}` } : {}),
      });
      const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
      ctx.hooks.onClose.push(() => db.destroy());
      w = new TokenEventWriter(db, ctx.clock, EVENT_LANES);
    } else {
      w = new TokenEventWriter(ctx.db, ctx.clock, 1);
    }
    writers.set(ctx, w);
  }
  return w;
}

/**
 * Verifies an access token of any brand as the issuer does: RS256 by one of our keys, `typ`
 * at+jwt (so an ID token is refused), our issuer, unexpired, and passing every registered check
 * (revoked jti, disabled app, deleted user). Null when any of it fails.
 */
export async function verifyAccessToken(
  ctx: AppContext,
  token: string,
): Promise<
  (Record<string, unknown> & { sub: string; client_id: string; jti: string; exp: number; iat: number }) | null
> {
  const claims = await verifyJwt(ctx.keys, ctx.clock, token, { issuer: ctx.config.issuer, typ: 'at+jwt' });
  if (
    !claims ||
    typeof claims.sub !== 'string' ||
    typeof claims.client_id !== 'string' ||
    typeof claims.jti !== 'string' ||
    typeof claims.exp !== 'number' ||
    typeof claims.iat !== 'number'
  )
    return null;
  for (const check of ctx.hooks.accessTokenChecks) {
    if (!(await check(claims))) return null;
  }
  return claims as Record<string, unknown> & {
    sub: string;
    client_id: string;
    jti: string;
    exp: number;
    iat: number;
  };
}

/** Whether a string has the shape of a compact JWS (three base64url parts). */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}
