import type { Db } from '../db/schema.js';
import type { TokenStore } from '../oidc/stores.js';

/** `refresh_tokens` and `access_tokens` (jti records of issued access tokens): owned here. */
export function tokenStore(db: Db): TokenStore {
  return {
    async findRefresh(tokenHash) {
      const row = await db
        .selectFrom('refresh_tokens')
        .selectAll()
        .where('token_hash', '=', tokenHash)
        .executeTakeFirst();
      return row ?? null;
    },
    async consumeRefresh(id, now) {
      const row = await db
        .updateTable('refresh_tokens')
        .set({ consumed_at: now })
        .where('id', '=', id)
        .where('consumed_at', 'is', null)
        .where('revoked_at', 'is', null)
        .returningAll()
        .executeTakeFirst();
      return row ?? null;
    },
    async findActiveRefresh(tokenHash, now) {
      const row = await db
        .selectFrom('refresh_tokens')
        .innerJoin('users', 'users.id', 'refresh_tokens.user_id')
        .select([
          'refresh_tokens.client_id as clientId',
          'refresh_tokens.user_id as userId',
          'refresh_tokens.scopes',
          'refresh_tokens.created_at as createdAt',
          'refresh_tokens.expires_at as expiresAt',
        ])
        .where('refresh_tokens.token_hash', '=', tokenHash)
        .where('refresh_tokens.consumed_at', 'is', null)
        .where('refresh_tokens.revoked_at', 'is', null)
        .where('refresh_tokens.expires_at', '>', now)
        .where('users.deleted_at', 'is', null)
        .executeTakeFirst();
      return row ?? null;
    },
    async insertRefresh(tx, row) {
      await tx.insertInto('refresh_tokens').values(row).execute();
    },
    async insertAccess(tx, row) {
      await tx
        .insertInto('access_tokens')
        .values({
          jti: row.jti,
          family_id: row.familyId,
          client_id: row.clientId,
          user_id: row.userId,
          expires_at: row.expiresAt,
        })
        .execute();
    },
  };
}
