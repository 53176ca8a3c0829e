import { type RawBuilder, sql } from 'kysely';
import type { Executor } from '../db/schema.js';
import type {
  EndedSession,
  ListedSession,
  NewSession,
  SessionStore,
  StoredSession,
  UserlessSession,
} from '../oidc/signin/stores.js';
import type { SessionClientStore } from '../oidc/stores.js';

/** A session row as the sign-in code sees it. */
function presentSession(row: {
  id: string;
  user_id: string;
  brand_id: string;
  auth_time: StoredSession['authTime'];
}): StoredSession {
  return { id: row.id, userId: row.user_id, brandId: row.brand_id, authTime: row.auth_time };
}

/** Every session of the user, on every brand (account deletion). */
export async function destroyUserSessions(trx: Executor, userId: string): Promise<number> {
  const res = await trx.deleteFrom('sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(res.numDeletedRows ?? 0);
}

/** The user's live sessions on every brand, newest first. */
async function listOfUser(
  db: Executor,
  userId: string,
  now: Date,
  currentHashes: string[],
): Promise<ListedSession[]> {
  const rows = await db
    .selectFrom('sessions')
    .innerJoin('brands', 'brands.id', 'sessions.brand_id')
    .select([
      'sessions.id',
      'brands.slug',
      'sessions.token_hash',
      'sessions.created_at',
      'sessions.last_seen_at',
      'sessions.user_agent',
      'sessions.ip',
    ])
    .where('sessions.user_id', '=', userId)
    .where('sessions.expires_at', '>', now)
    .orderBy('sessions.created_at', 'desc')
    .orderBy('sessions.id', 'desc')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    brandSlug: r.slug,
    createdAt: r.created_at,
    lastSeenAt: r.last_seen_at,
    userAgent: r.user_agent,
    ip: r.ip,
    current: currentHashes.includes(r.token_hash),
  }));
}

/** Deletes the sessions; each comes back with the apps that were issued tokens in it. */
async function endSessions(db: Executor, ids: string[]): Promise<EndedSession[]> {
  if (ids.length === 0) return [];
  const clients = await db
    .selectFrom('session_clients')
    .select(['session_id', 'client_id'])
    .where('session_id', 'in', ids)
    .orderBy('created_at')
    .execute();
  const rows = await db
    .deleteFrom('sessions')
    .where('id', 'in', ids)
    .returning(['id', 'user_id', 'brand_id', 'auth_time'])
    .execute();
  return rows.map((r) => ({
    id: r.id,
    userId: r.user_id,
    brandId: r.brand_id,
    authTime: r.auth_time,
    clientIds: clients.filter((c) => c.session_id === r.id).map((c) => c.client_id),
  }));
}

/** The insert of a new session (run alone, or composed into the sign-in's statement). */
export function sessionInsert(db: Executor, s: NewSession) {
  return db.insertInto('sessions').values({
    id: s.id,
    token_hash: s.tokenHash,
    user_id: s.userId,
    brand_id: s.brandId,
    auth_time: s.authTime,
    created_at: s.createdAt,
    expires_at: s.expiresAt,
    last_seen_at: s.createdAt,
    user_agent: s.userAgent,
    ip: s.ip,
  });
}

/**
 * A CTE body: the session inserted for the user the CTE `source` yields (`user_id`); nothing when it
 * yields no row (a statement that finds the user as it signs in).
 */
export function sessionInsertFor(source: string, s: UserlessSession): RawBuilder<unknown> {
  return sql`
    insert into sessions
      (id, token_hash, user_id, brand_id, auth_time, created_at, expires_at, last_seen_at, user_agent, ip)
    select ${s.id}, ${s.tokenHash}, user_id, ${s.brandId}, ${s.authTime}::timestamptz,
      ${s.createdAt}::timestamptz, ${s.expiresAt}::timestamptz, ${s.createdAt}::timestamptz,
      ${s.userAgent}::text, ${s.ip}::text
    from ${sql.table(source)}`;
}

/** The `sessions` table: browser sessions, one per brand, kept by the hash of their cookie. */
export function sessionStore(db: Executor): SessionStore {
  return {
    async insert(s) {
      await sessionInsert(db, s).execute();
    },
    async findLive(tokenHash, brandId, now) {
      const row = await db
        .selectFrom('sessions')
        .innerJoin('users', 'users.id', 'sessions.user_id')
        .select(['sessions.id', 'sessions.user_id', 'sessions.brand_id', 'sessions.auth_time'])
        .where('sessions.token_hash', '=', tokenHash)
        .where('sessions.brand_id', '=', brandId)
        .where('sessions.expires_at', '>', now)
        .where('users.deleted_at', 'is', null)
        .executeTakeFirst();
      return row ? presentSession(row) : null;
    },
    async find(id) {
      const row = await db
        .selectFrom('sessions')
        .select(['id', 'user_id', 'brand_id', 'auth_time'])
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? presentSession(row) : null;
    },
    async renew(id, f) {
      const res = await db
        .updateTable('sessions')
        .set({
          token_hash: f.tokenHash,
          auth_time: f.authTime,
          expires_at: f.expiresAt,
          last_seen_at: f.now,
          user_agent: f.userAgent,
          ip: f.ip,
        })
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },
    async touch(id, now, granularity) {
      await db
        .updateTable('sessions')
        .set({ last_seen_at: now })
        .where('id', '=', id)
        .where('last_seen_at', '<', new Date(now.getTime() - granularity * 1000))
        .execute();
    },
    listOfUser: (userId, now, currentHashes) => listOfUser(db, userId, now, currentHashes),
    async idsOfUser(userId) {
      const rows = await db.selectFrom('sessions').select('id').where('user_id', '=', userId).execute();
      return rows.map((r) => r.id);
    },
    end: (ids) => endSessions(db, ids),
    async deleteByToken(tokenHash, brandId) {
      await db
        .deleteFrom('sessions')
        .where('token_hash', '=', tokenHash)
        .where('brand_id', '=', brandId)
        .execute();
    },
    deleteOfUser: (userId) => destroyUserSessions(db, userId),
    deleteExpired: (now) => deleteExpiredSessions(db, now),
  };
}

/**
 * Common table expressions, for a statement whose CTE `source` has a `session_id` column: that
 * session is marked seen and the app remembered in it — only while the session lives (a code from an
 * ended session must not bring it back). One round trip on the token path, or none of its own when
 * the code's consuming statement carries them (authorization-codes.store.ts).
 */
export function sessionClientCtes(source: string, clientId: string, now: Date): RawBuilder<unknown> {
  return sql`
    seen as (
      update sessions set last_seen_at = ${now}::timestamptz
      where id = (select session_id from ${sql.table(source)}) returning id),
    remembered as (
      insert into session_clients (session_id, client_id, created_at)
      select id, ${clientId}, ${now}::timestamptz from seen
      on conflict (session_id, client_id) do nothing)`;
}

/**
 * Deletes the sessions no browser can use any more. An expired session's row stays while a live
 * refresh token was issued in it: offline_access outlives the browser session (OIDC Core §11), and a
 * logout, which deletes the row, is what lockLiveSession tells apart from expiry. The refresh
 * token's own expiry, its revocation or the end of the app's consent lets the row go.
 */
async function deleteExpiredSessions(db: Executor, now: Date): Promise<number> {
  const res = await db
    .deleteFrom('sessions')
    .where('expires_at', '<', now)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('refresh_tokens')
            .select('refresh_tokens.id')
            .whereRef('refresh_tokens.session_id', '=', 'sessions.id')
            .where('refresh_tokens.consumed_at', 'is', null)
            .where('refresh_tokens.revoked_at', 'is', null)
            .where('refresh_tokens.expires_at', '>', now),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(res.numDeletedRows ?? 0);
}

/**
 * Whether the session is live, locked against its end (`for key share`: a logout's delete waits
 * until `tx` ends) so a token tied to it can be written in `tx` without outliving a logout that
 * commits meanwhile. A session already ended answers false.
 */
export async function lockLiveSession(tx: Executor, sessionId: string): Promise<boolean> {
  const row = await tx
    .selectFrom('sessions')
    .select('id')
    .where('id', '=', sessionId)
    .forKeyShare()
    .executeTakeFirst();
  return row !== undefined;
}

/** `session_clients`: the apps issued tokens in each session (owned here, beside `sessions`). */
export function sessionClientStore(db: Executor): SessionClientStore {
  return {
    async record(tx, sessionId, clientId, now) {
      await sql`
        with given as (select ${sessionId}::text as session_id),
        ${sessionClientCtes('given', clientId, now)}
        select 1`.execute(tx ?? db);
    },
    async takeForClient(tx, userId, clientId) {
      const rows = await tx
        .deleteFrom('session_clients')
        .where('client_id', '=', clientId)
        .where('session_id', 'in', (eb) =>
          eb.selectFrom('sessions').select('id').where('user_id', '=', userId),
        )
        .returning('session_id')
        .execute();
      return rows.map((r) => r.session_id);
    },
  };
}
