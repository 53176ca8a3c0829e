import { type RawBuilder, sql } from 'kysely';
import type { Executor } from '../db/schema.js';
import type { InteractionStore } from '../oidc/signin/stores.js';

/** The interaction, while live (not expired, not completed): select what you need from it. */
export function liveInteraction(db: Executor, id: string, now: Date) {
  return db
    .selectFrom('interactions')
    .where('id', '=', id)
    .where('expires_at', '>', now)
    .where('completed_at', 'is', null);
}

/**
 * Puts the signed-in user on the live interaction and completes it, returning its id (no row when it
 * was no longer live); run alone or composed into the sign-in's statement.
 */
export function completeSignedInUpdate(
  db: Executor,
  id: string,
  f: { userId: string; sessionId: string; authTime: Date },
  now: Date,
) {
  return db
    .updateTable('interactions')
    .set({ user_id: f.userId, session_id: f.sessionId, auth_time: f.authTime, completed_at: now })
    .where('id', '=', id)
    .where('completed_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('id');
}

/**
 * A CTE body: the live interaction completed with the user the CTE `source` yields (`id`) on it,
 * returning the interaction's `id` and `user_id`; no row when it yields none or the interaction is
 * no longer live.
 */
export function completeSignedInFor(
  source: string,
  id: string,
  f: { sessionId: string; authTime: Date },
  now: Date,
): RawBuilder<unknown> {
  return sql`
    update interactions set user_id = src.id, session_id = ${f.sessionId},
      auth_time = ${f.authTime}::timestamptz, completed_at = ${now}::timestamptz
    from ${sql.table(source)} as src
    where interactions.id = ${id} and interactions.completed_at is null
      and interactions.expires_at > ${now}::timestamptz
    returning interactions.id, interactions.user_id`;
}

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
      return (await liveInteraction(db, id, now).selectAll().executeTakeFirst()) ?? null;
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
    async attachUser(id, f, now) {
      const row = await db
        .updateTable('interactions')
        .set({ user_id: f.userId, session_id: f.sessionId, auth_time: f.authTime })
        .where('id', '=', id)
        .where('completed_at', 'is', null)
        .where('expires_at', '>', now)
        .returning('id')
        .executeTakeFirst();
      return !!row;
    },
    async completeSignedIn(id, f, now) {
      return !!(await completeSignedInUpdate(db, id, f, now).executeTakeFirst());
    },
    async deleteExpired(now) {
      const res = await db.deleteFrom('interactions').where('expires_at', '<', now).executeTakeFirst();
      return Number(res.numDeletedRows ?? 0);
    },
  };
}
