import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { notFound } from '../../http/errors.js';
import { revokeUserTokens } from '../../oidc/revocation.js';
import { identityHash } from '../../oidc/signin/identities.js';

/**
 * DELETE /users/me. At once: sessions destroyed, issued tokens revoked, linked provider accounts,
 * wallets and API keys deleted (the wallets are free to link elsewhere), `deleted_at` set. For the
 * grace window only hashes of the sign-in identities are kept, so signing in with one restores the
 * account (restoreIfInGrace); the username stays on the row, so it stays reserved.
 */
export async function deleteAccount(ctx: AppContext, userId: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    const user = await trx
      .updateTable('users')
      .set({ deleted_at: now, updated_at: now })
      .where('id', '=', userId)
      .where('deleted_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    if (!user) throw notFound('user');
    const wallets = await trx
      .deleteFrom('user_public_keys')
      .where('user_id', '=', userId)
      .returning(['address'])
      .execute();
    const links = await trx
      .deleteFrom('oauth_links')
      .where('user_id', '=', userId)
      .returning(['provider', 'external_user_id'])
      .execute();
    const hashes = new Set([
      ...wallets.map((w) => identityHash({ kind: 'wallet', address: w.address })),
      ...links.map((l) =>
        identityHash({ kind: 'oauth', provider: l.provider, externalUserId: l.external_user_id }),
      ),
    ]);
    if (hashes.size > 0) {
      await trx
        .insertInto('deleted_identities')
        .values([...hashes].map((identity_hash) => ({ identity_hash, user_id: userId, deleted_at: now })))
        .onConflict((oc) => oc.columns(['identity_hash', 'user_id']).doUpdateSet({ deleted_at: now }))
        .execute();
    }
    await trx.deleteFrom('api_keys').where('user_id', '=', userId).execute();
    const signin = ctx.stores.signin.on(trx);
    await signin.walletChallenges.deleteOfUser(userId);
    await signin.sessions.deleteOfUser(userId);
    await revokeUserTokens(ctx, trx, userId);
  });
}

/**
 * Moves accounts whose grace window has ended to the graveyard: it keeps only the id and the two
 * dates that prove the deletion; the user row goes (its username is released, and what hangs off it
 * by foreign key goes with it). Returns how many accounts were purged.
 */
export async function sweepDeletedAccounts(ctx: AppContext): Promise<number> {
  let purged = 0;
  for (;;) {
    const cutoff = new Date(ctx.clock.nowMs() - defaults.accountDeletionGrace * 1000);
    const n = await ctx.db.transaction().execute(async (trx) => {
      const due = await trx
        .selectFrom('users')
        .select(['id', 'deleted_at'])
        .where('deleted_at', 'is not', null)
        .where('deleted_at', '<=', cutoff)
        .orderBy('deleted_at')
        .limit(defaults.accountSweepBatch)
        .forUpdate()
        .skipLocked()
        .execute();
      if (due.length === 0) return 0;
      const now = ctx.clock.now();
      await trx
        .insertInto('users_graveyard')
        .values(due.map((u) => ({ id: u.id, deleted_at: u.deleted_at as Date, purged_at: now })))
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      await trx
        .deleteFrom('users')
        .where(
          'id',
          'in',
          due.map((u) => u.id),
        )
        .execute();
      return due.length;
    });
    purged += n;
    if (n < defaults.accountSweepBatch) return purged;
  }
}
