import type { Executor } from '../db/schema.js';
import type { SessionStore } from '../oidc/signin/stores.js';

/** Every session of the user, on every brand (account deletion). */
export async function destroyUserSessions(trx: Executor, userId: string): Promise<number> {
  const res = await trx.deleteFrom('sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(res.numDeletedRows ?? 0);
}

/** The `sessions` table: browser sessions, one per brand, kept by the hash of their cookie. */
export function sessionStore(db: Executor): SessionStore {
  return {
    async insert(s) {
      await db
        .insertInto('sessions')
        .values({
          id: s.id,
          token_hash: s.tokenHash,
          user_id: s.userId,
          brand_id: s.brandId,
          auth_time: s.authTime,
          created_at: s.createdAt,
          expires_at: s.expiresAt,
        })
        .execute();
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
      return row ? { id: row.id, userId: row.user_id, brandId: row.brand_id, authTime: row.auth_time } : null;
    },
    async deleteByToken(tokenHash, brandId) {
      await db
        .deleteFrom('sessions')
        .where('token_hash', '=', tokenHash)
        .where('brand_id', '=', brandId)
        .execute();
    },
    deleteOfUser: (userId) => destroyUserSessions(db, userId),
    async deleteExpired(now) {
      const res = await db.deleteFrom('sessions').where('expires_at', '<', now).executeTakeFirst();
      return Number(res.numDeletedRows ?? 0);
    },
  };
}
