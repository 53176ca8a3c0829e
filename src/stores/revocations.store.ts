import { type RawBuilder, sql } from 'kysely';
import { defaults } from '../config/defaults.js';
import type { Db, Executor } from '../db/schema.js';
import { invalidateEverywhere } from '../events/invalidation.js';
import type { Clock } from '../lib/clock.js';
import type { FamilyFilter, RevocationStore } from '../oidc/stores.js';
import { burnCodesOfSessions, burnCodesOfUser, sweepCodes } from './authorization-codes.store.js';
import { sweepDevices } from './device-authorizations.store.js';
import { lockFamily, revokeRefreshTokens, sweepRefreshTokens } from './tokens.store.js';

/**
 * Revokes token families: their refresh tokens stop refreshing and the jtis of their unexpired
 * access tokens go to `revoked_tokens`, which the issuer checks on every access-token use.
 */
async function revokeFamilies(db: Executor, filter: FamilyFilter, now: Date): Promise<void> {
  if (filter.familyId) await lockFamily(db, filter.familyId);
  let access = db
    .selectFrom('access_tokens')
    .select(['jti', 'expires_at', sql<Date>`${now}::timestamptz`.as('revoked_at')])
    .where('expires_at', '>', now);
  if (filter.familyId) access = access.where('family_id', '=', filter.familyId);
  if (filter.userId) access = access.where('user_id', '=', filter.userId);
  if (filter.clientId) access = access.where('client_id', '=', filter.clientId);
  if (filter.sessionId) {
    access = access.where('session_id', '=', filter.sessionId);
    await burnCodesOfSessions(db, [filter.sessionId], now);
  }
  await revokeRefreshTokens(db, filter, now);
  const revoked = await db
    .insertInto('revoked_tokens')
    .columns(['jti', 'expires_at', 'revoked_at'])
    .expression(access)
    .onConflict((oc) => oc.column('jti').doNothing())
    .returning('jti')
    .execute();
  await tokensRevoked(
    db,
    revoked.map((r) => r.jti),
  );
}

/**
 * Every instance's cached token state (src/oidc/user-cache.ts) forgets these jtis: this process's
 * at once, every instance's when `db`'s transaction commits (just after the write without one).
 * Past `tokenInvalidationMaxKeys`, every cached token state at once instead of one key each.
 */
function tokensRevoked(db: Executor, jtis: string[]): Promise<void> {
  return invalidateEverywhere(db, 'token', jtis.length > defaults.tokenInvalidationMaxKeys ? ['*'] : jtis);
}

async function sweep(db: Executor, now: Date): Promise<void> {
  const dayAgo = new Date(now.getTime() - 24 * 3600 * 1000);
  // Used codes stay a day so a late second redemption still revokes what the first one issued.
  await sweepCodes(db, dayAgo);
  // Expired device codes stay a day too, so a device still polling hears expired_token (RFC 8628
  // §3.5), not invalid_grant.
  await sweepDevices(db, dayAgo);
  await db.deleteFrom('revoked_tokens').where('expires_at', '<', now).execute();
  await db.deleteFrom('access_tokens').where('expires_at', '<', now).execute();
  await sweepRefreshTokens(db, now, dayAgo);
}

/**
 * `access_tokens` (jti records of issued user tokens) and `revoked_tokens`; revocation across the
 * token tables calls their owners (refresh tokens, codes, device authorizations);
 * `tokenState` reads `users.deleted_at` in the same statement so the check on every access-token use
 * is one round trip.
 */
/**
 * A common table expression, for a statement whose CTE `source` is a consumed code (or any row with
 * `family_id`, `client_id`, `user_id`, `session_id`): the access token issued for it recorded by jti
 * in its family, as `recordAccessToken` does, in the same statement as the consumption.
 */
export function accessTokenFromCte(
  source: string,
  token: { jti: string; expiresAt: Date },
): RawBuilder<unknown> {
  return sql`
    recorded as (
      insert into access_tokens (jti, family_id, client_id, user_id, expires_at, session_id)
      select ${token.jti}, family_id, client_id, user_id, ${token.expiresAt}::timestamptz, session_id
      from ${sql.table(source)})`;
}

export function revocationStore(db: Db): RevocationStore {
  return {
    async recordAccessToken(tx, row) {
      await (tx ?? db)
        .insertInto('access_tokens')
        .values({
          jti: row.jti,
          family_id: row.familyId,
          client_id: row.clientId,
          user_id: row.userId,
          expires_at: row.expiresAt,
          session_id: row.sessionId ?? null,
        })
        .execute();
    },
    // Without a caller's transaction, one of its own: the revocation and its announcement commit
    // together. Apart, a crash (or a failed notify) after the insert committed would leave other
    // instances serving the tokens from their caches, and a retry would announce nothing (its insert
    // finds the jtis already there).
    revokeFamilies: (tx, filter, now) =>
      tx
        ? revokeFamilies(tx, filter, now)
        : db.transaction().execute((trx) => revokeFamilies(trx, filter, now)),
    burnCodesOfUser: (tx, userId, now) => burnCodesOfUser(tx, userId, now),
    burnCodesOfSessions: (tx, sessionIds, now) => burnCodesOfSessions(tx, sessionIds, now),
    async revokeAccessToken(tx, jti, expiresAt, now) {
      const revoke = async (trx: Executor) => {
        await trx
          .insertInto('revoked_tokens')
          .values({ jti, expires_at: expiresAt, revoked_at: now })
          .onConflict((oc) => oc.column('jti').doNothing())
          .execute();
        await tokensRevoked(trx, [jti]);
      };
      // As revokeFamilies: the row and its announcement in one commit.
      await (tx ? revoke(tx) : db.transaction().execute(revoke));
    },
    async isRevoked(tx, jti) {
      const row = await tx
        .selectFrom('revoked_tokens')
        .select('jti')
        .where('jti', '=', jti)
        .executeTakeFirst();
      return row !== undefined;
    },
    async tokenState(jti, userId) {
      const { rows } = await sql<{ revoked: boolean; live: boolean | null }>`
        select exists (select 1 from revoked_tokens where jti = ${jti}) as revoked,
               (select deleted_at is null from users where id = ${userId}) as live`.execute(db);
      const r = rows[0];
      return { revoked: !r || r.revoked, live: r?.live === true };
    },
    sweep: (now) => sweep(db, now),
  };
}

/** Revokes every token the user holds for one client (consent revoked), in `trx`. */
export function revokeTokensForGrant(
  trx: Executor,
  clock: Clock,
  grant: { userId: string; clientId: string },
): Promise<void> {
  return revokeFamilies(trx, { userId: grant.userId, clientId: grant.clientId }, clock.now());
}

/** Revokes every token of the user, and burns their unredeemed codes (account deletion), in `trx`. */
export async function revokeAllForUser(trx: Executor, clock: Clock, userId: string): Promise<void> {
  const now = clock.now();
  await burnCodesOfUser(trx, userId, now);
  await revokeFamilies(trx, { userId }, now);
}

/** Deletes what can no longer matter: expired codes, device codes, revocation and jti records. */
export function sweepExpired(db: Db, clock: Clock): Promise<void> {
  return sweep(db, clock.now());
}
