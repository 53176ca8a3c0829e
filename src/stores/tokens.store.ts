import { sql } from 'kysely';
import type { Db, Executor } from '../db/schema.js';
import type { FamilyFilter, TokenStore } from '../oidc/stores.js';
import { lockLiveSession } from './sessions.store.js';

/**
 * Serialises the revocation of a token family with the issuing of tokens into it: both take this
 * transaction-scoped lock first, so a revocation either sees the refresh token an issuance writes, or
 * comes before it and is seen by it (`familyRevoked`). `tx` must be a transaction.
 */
export async function lockFamily(tx: Executor, familyId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`token-family:${familyId}`}, 0))`.execute(tx);
}

/** Whether the family was revoked: refresh tokens are only ever revoked a whole family at a time. */
async function familyRevoked(tx: Executor, familyId: string): Promise<boolean> {
  const row = await tx
    .selectFrom('refresh_tokens')
    .select('id')
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is not', null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Revokes the refresh tokens of the families `filter` names. */
export async function revokeRefreshTokens(db: Executor, filter: FamilyFilter, now: Date): Promise<void> {
  let q = db.updateTable('refresh_tokens').set({ revoked_at: now }).where('revoked_at', 'is', null);
  if (filter.familyId) q = q.where('family_id', '=', filter.familyId);
  if (filter.userId) q = q.where('user_id', '=', filter.userId);
  if (filter.clientId) q = q.where('client_id', '=', filter.clientId);
  if (filter.sessionId) q = q.where('session_id', '=', filter.sessionId);
  await q.execute();
}

/** Deletes refresh tokens expired or revoked, created before `before`. */
export async function sweepRefreshTokens(db: Executor, now: Date, before: Date): Promise<void> {
  await db
    .deleteFrom('refresh_tokens')
    .where((eb) => eb.or([eb('expires_at', '<', now), eb('revoked_at', 'is not', null)]))
    .where('created_at', '<', before)
    .execute();
}

/** `refresh_tokens`: owned here. */
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
      // Reuse detection racing this issuance (the old token presented again while its successor is
      // being made) revokes the family: then nothing is written, or the revocation sees this token.
      await lockFamily(tx, row.family_id);
      if (await familyRevoked(tx, row.family_id)) return false;
      if (row.session_id !== null && !(await lockLiveSession(tx, row.session_id))) return false;
      await tx.insertInto('refresh_tokens').values(row).execute();
      return true;
    },
  };
}
