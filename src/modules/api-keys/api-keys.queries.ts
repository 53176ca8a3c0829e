import { defaults } from '../../config/defaults.js';
import type { Executor } from '../../db/schema.js';
import type { ApiKeyRow } from '../users/users.queries.js';

export type { ApiKeyRow } from '../users/users.queries.js';

export async function insertApiKey(db: Executor, row: ApiKeyRow): Promise<ApiKeyRow> {
  return db.insertInto('api_keys').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function listApiKeys(db: Executor, userId: string): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Sets revokedAt once; revoking again leaves the first time. Only the owner's key. */
export async function revokeApiKey(
  db: Executor,
  userId: string,
  id: string,
  now: Date,
): Promise<ApiKeyRow | undefined> {
  const revoked = await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (revoked) return revoked;
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** The live key with this hash, if its user is not deleted. Revocation and expiry are checked by the caller. */
export async function findApiKeyByHash(db: Executor, keyHash: string): Promise<ApiKeyRow | undefined> {
  return db
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .selectAll('k')
    .where('k.key_hash', '=', keyHash)
    .where('u.deleted_at', 'is', null)
    .executeTakeFirst();
}

/** Records use at most once per `apiKeyTouchInterval` (a minute) per key, so a busy key does not write on every request. */
export async function touchApiKey(db: Executor, id: string, now: Date): Promise<void> {
  const staleBefore = new Date(now.getTime() - defaults.apiKeyTouchInterval * 1000);
  await db
    .updateTable('api_keys')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', staleBefore)]))
    .execute();
}

export async function deleteApiKeysOf(db: Executor, userId: string): Promise<void> {
  await db.deleteFrom('api_keys').where('user_id', '=', userId).execute();
}
