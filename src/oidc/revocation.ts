import { sql } from 'kysely';
import type { AccessTokenCheck, AppContext } from '../context.js';
import type { Db, Executor } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
import { loadClient } from './clients.js';

/**
 * Revokes token families: their refresh tokens stop refreshing and the jtis of their unexpired
 * access tokens go to `revoked_tokens`, which the issuer checks on every access-token use.
 */
async function revokeFamilies(
  db: Executor,
  clock: Clock,
  filter: { familyId?: string; userId?: string; clientId?: string },
): Promise<void> {
  const now = clock.now();
  let refresh = db.updateTable('refresh_tokens').set({ revoked_at: now }).where('revoked_at', 'is', null);
  let access = db
    .selectFrom('access_tokens')
    .select(['jti', 'expires_at', sql<Date>`${now}::timestamptz`.as('revoked_at')])
    .where('expires_at', '>', now);
  if (filter.familyId) {
    refresh = refresh.where('family_id', '=', filter.familyId);
    access = access.where('family_id', '=', filter.familyId);
  }
  if (filter.userId) {
    refresh = refresh.where('user_id', '=', filter.userId);
    access = access.where('user_id', '=', filter.userId);
  }
  if (filter.clientId) {
    refresh = refresh.where('client_id', '=', filter.clientId);
    access = access.where('client_id', '=', filter.clientId);
  }
  await refresh.execute();
  await db
    .insertInto('revoked_tokens')
    .columns(['jti', 'expires_at', 'revoked_at'])
    .expression(access)
    .onConflict((oc) => oc.column('jti').doNothing())
    .execute();
}

/** Revokes one family (a code's or a device authorization's tokens, with every rotation). */
export function revokeFamily(db: Executor, clock: Clock, familyId: string): Promise<void> {
  return revokeFamilies(db, clock, { familyId });
}

/** Revokes every token the user holds for one client (consent revoked). */
export function revokeTokensForGrant(
  trx: Executor,
  clock: Clock,
  grant: { userId: string; clientId: string },
): Promise<void> {
  return revokeFamilies(trx, clock, { userId: grant.userId, clientId: grant.clientId });
}

/** Revokes every token of the user, and burns their unredeemed codes (account deletion). */
export async function revokeAllForUser(trx: Executor, clock: Clock, userId: string): Promise<void> {
  await trx
    .updateTable('authorization_codes')
    .set({ consumed_at: clock.now() })
    .where('user_id', '=', userId)
    .where('consumed_at', 'is', null)
    .execute();
  await revokeFamilies(trx, clock, { userId });
}

/** Records an access token's jti as revoked until the token would have expired. */
export async function revokeAccessToken(db: Executor, clock: Clock, jti: string, exp: number): Promise<void> {
  await db
    .insertInto('revoked_tokens')
    .values({ jti, expires_at: new Date(exp * 1000), revoked_at: clock.now() })
    .onConflict((oc) => oc.column('jti').doNothing())
    .execute();
}

/**
 * The issuer's check on every verified access token: its app is still live (from the client
 * cache), its jti is not revoked and its user (for user tokens) is not deleted — one query.
 */
export function revocationCheck(ctx: AppContext): AccessTokenCheck {
  return async (claims) => {
    const clientId = claims.client_id;
    const jti = claims.jti;
    const sub = claims.sub;
    if (typeof clientId !== 'string' || typeof jti !== 'string' || typeof sub !== 'string') return false;
    if (!(await loadClient(ctx, clientId))) return false;
    // Client-credentials tokens carry the client id as sub (RFC 9068) and have no user.
    const userId = sub === clientId ? null : sub;
    const { rows } = await sql<{ revoked: boolean; live: boolean | null }>`
      select exists (select 1 from revoked_tokens where jti = ${jti}) as revoked,
             (select deleted_at is null from users where id = ${userId}) as live`.execute(ctx.db);
    const r = rows[0];
    if (!r || r.revoked) return false;
    return userId === null || r.live === true;
  };
}

/** Deletes what can no longer matter: expired codes, device codes, revocation records, jti records. */
export async function sweepExpired(db: Db, clock: Clock): Promise<void> {
  const now = clock.now();
  const dayAgo = new Date(now.getTime() - 24 * 3600 * 1000);
  // Used codes stay a day so a late second redemption still revokes what the first one issued.
  await db.deleteFrom('authorization_codes').where('expires_at', '<', dayAgo).execute();
  await db.deleteFrom('device_authorizations').where('expires_at', '<', now).execute();
  await db.deleteFrom('revoked_tokens').where('expires_at', '<', now).execute();
  await db.deleteFrom('access_tokens').where('expires_at', '<', now).execute();
  await db
    .deleteFrom('refresh_tokens')
    .where((eb) => eb.or([eb('expires_at', '<', now), eb('revoked_at', 'is not', null)]))
    .where('created_at', '<', dayAgo)
    .execute();
}
