import { sql } from 'kysely';
import type { Executor } from '../db/schema.js';
import { walletOwnerCtes } from '../modules/users/users.queries.js';
import { liveInteraction } from './interactions.store.js';
import type { WalletChallengeRow, WalletChallengeStore } from '../oidc/signin/stores.js';

/** The challenge with this message hash consumed, when of this purpose and brand, unexpired, unused. */
export function consumeLiveUpdate(
  db: Executor,
  messageHash: string,
  expected: { purpose: string; brandId: string; now: Date },
) {
  return db
    .updateTable('wallet_challenges')
    .set({ consumed_at: expected.now })
    .where('message_hash', '=', messageHash)
    .where('purpose', '=', expected.purpose)
    .where('brand_id', '=', expected.brandId)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', expected.now)
    .returningAll();
}

/** The `wallet_challenges` table: Sign-In With Solana messages issued, kept as hashes, used once. */
export function walletChallengeStore(db: Executor): WalletChallengeStore {
  return {
    async insert(row) {
      await db.insertInto('wallet_challenges').values(row).execute();
    },
    async insertDuring(row, interactionId, now) {
      // One statement: the insert happens only while the interaction it is issued in is live.
      const { rows } = await sql<{ id: string }>`
        insert into wallet_challenges
          (id, message_hash, nonce_hash, brand_id, address, purpose, user_id, created_at, expires_at)
        select ${row.id}, ${row.message_hash}, ${row.nonce_hash}, ${row.brand_id}, ${row.address},
          ${row.purpose}, ${row.user_id}, ${row.created_at}::timestamptz, ${row.expires_at}::timestamptz
        where exists (${liveInteraction(db, interactionId, now).select('id')})
        returning id`.execute(db);
      return rows.length > 0;
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
      return (await consumeLiveUpdate(db, messageHash, expected).executeTakeFirst()) ?? null;
    },
    async consumeForSignIn(messageHash, expected) {
      const consume = consumeLiveUpdate(db, messageHash, expected).where('address', '=', expected.address);
      const { rows } = await sql<WalletChallengeRow & { owner_id: string | null }>`
        with consumed as (${consume}), ${walletOwnerCtes('consumed', expected.now)}
        select consumed.*, (select id from owner) as owner_id from consumed`.execute(db);
      const row = rows[0];
      if (!row) return null;
      const { owner_id: ownerId, ...challenge } = row;
      return { challenge, ownerId };
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
