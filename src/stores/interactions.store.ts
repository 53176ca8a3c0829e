import type { Executor } from '../db/schema.js';
import type { InteractionStore } from '../oidc/signin/stores.js';

/** The `interactions` table: sign-in and consent steps between /authorize and the redirect back. */
export function interactionStore(db: Executor): InteractionStore {
  return {
    async insert(row) {
      await db
        .insertInto('interactions')
        .values({ ...row, params: JSON.stringify(row.params) })
        .execute();
    },
    async findLive(id, now) {
      const row = await db
        .selectFrom('interactions')
        .selectAll()
        .where('id', '=', id)
        .where('expires_at', '>', now)
        .where('completed_at', 'is', null)
        .executeTakeFirst();
      return row ?? null;
    },
    async complete(id, now) {
      const row = await db
        .updateTable('interactions')
        .set({ completed_at: now })
        .where('id', '=', id)
        .where('completed_at', 'is', null)
        .where('expires_at', '>', now)
        .returning('id')
        .executeTakeFirst();
      return !!row;
    },
    async attachUser(id, f) {
      await db
        .updateTable('interactions')
        .set({ user_id: f.userId, session_id: f.sessionId, auth_time: f.authTime })
        .where('id', '=', id)
        .execute();
    },
    async completeSignedIn(id, f, now) {
      const row = await db
        .updateTable('interactions')
        .set({ user_id: f.userId, session_id: f.sessionId, auth_time: f.authTime, completed_at: now })
        .where('id', '=', id)
        .where('completed_at', 'is', null)
        .where('expires_at', '>', now)
        .returning('id')
        .executeTakeFirst();
      return !!row;
    },
    async deleteExpired(now) {
      const res = await db.deleteFrom('interactions').where('expires_at', '<', now).executeTakeFirst();
      return Number(res.numDeletedRows ?? 0);
    },
  };
}
