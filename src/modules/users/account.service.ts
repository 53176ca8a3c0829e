import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { notFound } from '../../http/errors.js';
import { revokeUserTokens } from '../../oidc/revocation.js';
import { identityHash } from '../../oidc/signin/identities.js';
import { endUserSessions } from '../../oidc/signin/logout.js';
import { deleteApiKeysOf } from '../api-keys/api-keys.queries.js';
import * as q from './users.queries.js';

/**
 * DELETE /users/me. At once: sessions destroyed, issued tokens revoked, linked provider accounts,
 * wallets and API keys deleted (the wallets are free to link elsewhere), `deleted_at` set. For the
 * grace window only hashes of the sign-in identities are kept, so signing in with one restores the
 * account (restoreIfInGrace); the username stays on the row, so it stays reserved.
 */
export async function deleteAccount(ctx: AppContext, userId: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    if (!(await q.markUserDeleted(trx, userId, now))) throw notFound('user');
    const wallets = await q.deleteWalletsOf(trx, userId);
    const links = await q.deleteOAuthLinksOf(trx, userId);
    const hashes = new Set([
      ...wallets.map((w) => identityHash({ kind: 'wallet', address: w.address })),
      ...links.map((l) =>
        identityHash({ kind: 'oauth', provider: l.provider, externalUserId: l.external_user_id }),
      ),
    ]);
    if (hashes.size > 0) await q.keepDeletedIdentities(trx, userId, [...hashes], now);
    await deleteApiKeysOf(trx, userId);
    const signin = ctx.stores.signin.on(trx);
    await signin.walletChallenges.deleteOfUser(userId);
    // Ended as logout ends them: the apps signed in through them get back-channel logout tokens.
    await endUserSessions(ctx, trx, userId);
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
      const due = await q.lockAccountsDeletedBefore(trx, cutoff, defaults.accountSweepBatch);
      if (due.length === 0) return 0;
      await q.buryAccounts(trx, due, ctx.clock.now());
      return due.length;
    });
    purged += n;
    if (n < defaults.accountSweepBatch) return purged;
  }
}
