import type { Executor } from '../db/schema.js';
import type { WalletChallengeStore } from '../oidc/signin/stores.js';

/** The `wallet_challenges` table: Sign-In With Solana messages issued, kept as hashes, used once. */
export function walletChallengeStore(db: Executor): WalletChallengeStore {
  return {
    async insert(row) {
      await db.insertInto('wallet_challenges').values(row).execute();
    },
    async findByMessageHash(messageHash) {
      const row = await db
        .selectFrom('wallet_challenges')
        .selectAll()
        .where('message_hash', '=', messageHash)
        .executeTakeFirst();
      return row ?? null;
    },
    async consume(id, now) {
      const row = await db
        .updateTable('wallet_challenges')
        .set({ consumed_at: now })
        .where('id', '=', id)
        .where('consumed_at', 'is', null)
        .returning('id')
        .executeTakeFirst();
      return !!row;
    },
    async consumeLive(messageHash, expected) {
      const row = await db
        .updateTable('wallet_challenges')
        .set({ consumed_at: expected.now })
        .where('message_hash', '=', messageHash)
        .where('purpose', '=', expected.purpose)
        .where('brand_id', '=', expected.brandId)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', expected.now)
        .returningAll()
        .executeTakeFirst();
      return row ?? null;
    },
    async deleteOfUser(userId) {
      await db.deleteFrom('wallet_challenges').where('user_id', '=', userId).execute();
    },
    async deleteExpired(now) {
      const res = await db.deleteFrom('wallet_challenges').where('expires_at', '<', now).executeTakeFirst();
      return Number(res.numDeletedRows ?? 0);
    },
  };
}
