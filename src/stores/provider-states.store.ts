import type { Executor } from '../db/schema.js';
import { brandIdByCallbackId } from '../modules/brands/brands.queries.js';
import type { ProviderStateStore } from '../oidc/signin/stores.js';

/** Deletes states past their expiry (sign-in states go with their interactions; link states here). */
export async function deleteExpiredProviderStates(db: Executor, now: Date): Promise<number> {
  const res = await db.deleteFrom('provider_states').where('expires_at', '<', now).executeTakeFirst();
  return Number(res.numDeletedRows ?? 0);
}

/** The live, unredeemed state a return names, for the live brand whose callback id is in the path. */
async function findLive(
  db: Executor,
  input: Parameters<ProviderStateStore['findLive']>[0],
): ReturnType<ProviderStateStore['findLive']> {
  const brandId = await brandIdByCallbackId(db, input.oauthCallbackId, { live: true });
  if (!brandId) return null;
  const row = await db
    .selectFrom('provider_states')
    .selectAll()
    .where('state_hash', '=', input.stateHash)
    .where('provider', '=', input.provider)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', input.now)
    .where('brand_id', '=', brandId)
    .executeTakeFirst();
  return row ?? null;
}

/** A live Telegram link state by its binding's hash, for the brand with this callback id. */
async function findTelegramLink(
  db: Executor,
  input: Parameters<ProviderStateStore['findTelegramLink']>[0],
): ReturnType<ProviderStateStore['findTelegramLink']> {
  const brandId = await brandIdByCallbackId(db, input.oauthCallbackId, { live: false });
  if (!brandId) return null;
  const row = await db
    .selectFrom('provider_states')
    .select(['id', 'brand_id', 'binding_hash'])
    .where('state_hash', '=', input.bindingHash)
    .where('provider', '=', 'telegram')
    .where('purpose', '=', 'link')
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', input.now)
    .where('brand_id', '=', brandId)
    .executeTakeFirst();
  return row ?? null;
}

/** The `provider_states` table: one row per trip to an upstream provider (sign-in or link). */
export function providerStateStore(db: Executor): ProviderStateStore {
  return {
    async insert(row) {
      await db.insertInto('provider_states').values(row).execute();
    },
    findLive: (input) => findLive(db, input),
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
    findTelegramLink: (input) => findTelegramLink(db, input),
    deleteExpired: (now) => deleteExpiredProviderStates(db, now),
  };
}
