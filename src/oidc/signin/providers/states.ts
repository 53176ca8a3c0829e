import type { Selectable } from 'kysely';
import type { Executor, ProviderStatesTable } from '../../../db/schema.js';

export type ProviderStateRow = Selectable<ProviderStatesTable>;

export async function insertProviderState(
  db: Executor,
  row: Omit<ProviderStateRow, 'consumed_at' | 'binding_hash' | 'pending_link_enc' | 'confirmed_at'> & {
    binding_hash?: string | null;
  },
): Promise<void> {
  await db.insertInto('provider_states').values(row).execute();
}

/**
 * The live, unredeemed state a provider return names. The brand's callback id in the path must be
 * the one the state was made for. Read first so the return is checked (browser binding, interaction)
 * before `consumeProviderState` redeems it.
 */
export async function findProviderState(
  db: Executor,
  input: { stateHash: string; provider: string; oauthCallbackId: string; now: Date },
): Promise<ProviderStateRow | null> {
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
}

/**
 * Redeems a state once: the caller that gets the row continues, every other (a replay, a second
 * tab, a late return after the interaction expired) gets null.
 */
export async function consumeProviderState(
  db: Executor,
  input: { id: string; now: Date },
): Promise<ProviderStateRow | null> {
  const row = await db
    .updateTable('provider_states')
    .set({ consumed_at: input.now })
    .where('id', '=', input.id)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', input.now)
    .returningAll()
    .executeTakeFirst();
  return row ?? null;
}

/** Parks a redeemed link's sealed identity until its browser confirms or cancels. */
export async function holdPendingLink(db: Executor, id: string, sealed: string): Promise<void> {
  await db.updateTable('provider_states').set({ pending_link_enc: sealed }).where('id', '=', id).execute();
}

/** A link waiting for confirmation, by its state id; null when gone, answered or expired. */
export async function findPendingLink(db: Executor, id: string, now: Date): Promise<ProviderStateRow | null> {
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
}

/** Answers a pending link once (confirm or cancel), clearing the sealed identity; false if already answered. */
export async function answerPendingLink(db: Executor, id: string, now: Date): Promise<boolean> {
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
}

export async function deleteExpiredProviderStates(db: Executor, now: Date): Promise<number> {
  const res = await db.deleteFrom('provider_states').where('expires_at', '<', now).executeTakeFirst();
  return Number(res.numDeletedRows ?? 0);
}
