import type { Executor } from '../db/schema.js';
import type { ProviderStateStore } from '../oidc/signin/stores.js';

/** Deletes states past their expiry (sign-in states go with their interactions; link states here). */
export async function deleteExpiredProviderStates(db: Executor, now: Date): Promise<number> {
  const res = await db.deleteFrom('provider_states').where('expires_at', '<', now).executeTakeFirst();
  return Number(res.numDeletedRows ?? 0);
}

/** The `provider_states` table: one row per trip to an upstream provider (sign-in or link). */
export function providerStateStore(db: Executor): ProviderStateStore {
  return {
    async insert(row) {
      await db.insertInto('provider_states').values(row).execute();
    },
    async findLive(input) {
      const row = await db
        .selectFrom('provider_states')
        .selectAll()
        .where('state_hash', '=', input.stateHash)
        .where('provider', '=', input.provider)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', input.now)
        .where('brand_id', 'in', (eb) =>
          eb
            .selectFrom('brands')
            .select('id')
            .where('oauth_callback_id', '=', input.oauthCallbackId)
            .where('deleted_at', 'is', null),
        )
        .executeTakeFirst();
      return row ?? null;
    },
    async consume(input) {
      const row = await db
        .updateTable('provider_states')
        .set({ consumed_at: input.now })
        .where('id', '=', input.id)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', input.now)
        .returningAll()
        .executeTakeFirst();
      return row ?? null;
    },
    async holdPendingLink(id, sealed) {
      await db
        .updateTable('provider_states')
        .set({ pending_link_enc: sealed })
        .where('id', '=', id)
        .execute();
    },
    async findPendingLink(id, now) {
      const row = await db
        .selectFrom('provider_states')
        .selectAll()
        .where('id', '=', id)
        .where('purpose', '=', 'link')
        .where('consumed_at', 'is not', null)
        .where('confirmed_at', 'is', null)
        .where('pending_link_enc', 'is not', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return row ?? null;
    },
    async answerPendingLink(id, now) {
      const row = await db
        .updateTable('provider_states')
        .set({ confirmed_at: now, pending_link_enc: null })
        .where('id', '=', id)
        .where('confirmed_at', 'is', null)
        .where('pending_link_enc', 'is not', null)
        .where('expires_at', '>', now)
        .returning('id')
        .executeTakeFirst();
      return !!row;
    },
    async findTelegramLink(input) {
      const row = await db
        .selectFrom('provider_states')
        .innerJoin('brands', 'brands.id', 'provider_states.brand_id')
        .select(['provider_states.id', 'provider_states.brand_id', 'provider_states.binding_hash'])
        .where('provider_states.state_hash', '=', input.bindingHash)
        .where('provider_states.provider', '=', 'telegram')
        .where('provider_states.purpose', '=', 'link')
        .where('provider_states.consumed_at', 'is', null)
        .where('provider_states.expires_at', '>', input.now)
        .where('brands.oauth_callback_id', '=', input.oauthCallbackId)
        .executeTakeFirst();
      return row ?? null;
    },
    deleteExpired: (now) => deleteExpiredProviderStates(db, now),
  };
}
