import type { Executor } from '../db/schema.js';
import type { CodeStore } from '../oidc/stores.js';

/** Marks the user's unredeemed codes as used (account deletion). */
export async function burnCodesOfUser(db: Executor, userId: string, now: Date): Promise<void> {
  await db
    .updateTable('authorization_codes')
    .set({ consumed_at: now })
    .where('user_id', '=', userId)
    .where('consumed_at', 'is', null)
    .execute();
}

/** Marks the unredeemed codes issued in a browser session as used (the session was ended). */
export async function burnCodesOfSession(db: Executor, sessionId: string, now: Date): Promise<void> {
  await db
    .updateTable('authorization_codes')
    .set({ consumed_at: now })
    .where('session_id', '=', sessionId)
    .where('consumed_at', 'is', null)
    .execute();
}

/** Deletes codes that expired before `before`. */
export async function sweepCodes(db: Executor, before: Date): Promise<void> {
  await db.deleteFrom('authorization_codes').where('expires_at', '<', before).execute();
}

/** `authorization_codes`: owned here. */
export function codeStore(db: Executor): CodeStore {
  return {
    async insert(row) {
      await db.insertInto('authorization_codes').values(row).execute();
    },
    async find(codeHash) {
      const row = await db
        .selectFrom('authorization_codes')
        .selectAll()
        .where('code_hash', '=', codeHash)
        .executeTakeFirst();
      return row ?? null;
    },
    async consume(codeHash, now) {
      const row = await db
        .updateTable('authorization_codes')
        .set({ consumed_at: now })
        .where('code_hash', '=', codeHash)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', now)
        .returningAll()
        .executeTakeFirst();
      return row ?? null;
    },
    async consumeMatching(codeHash, r) {
      const row = await db
        .updateTable('authorization_codes')
        .set({ consumed_at: r.now })
        .where('code_hash', '=', codeHash)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', r.now)
        .where('client_id', '=', r.clientId)
        .where('redirect_uri', '=', r.redirectUri)
        .where('code_challenge', r.codeChallenge === null ? 'is' : '=', r.codeChallenge)
        .returningAll()
        .executeTakeFirst();
      return row ?? null;
    },
  };
}
