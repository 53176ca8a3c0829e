import type { Selectable } from 'kysely';
import type { Executor, Timestamp } from '../db/types.js';

/** Table of migration 0009_providers.sql: one row per trip to a provider, redeemed once. */
export interface ProviderStatesTable {
  id: string;
  state_hash: string;
  provider: string;
  brand_id: string;
  purpose: 'signin' | 'link';
  interaction_id: string | null;
  user_id: string | null;
  nonce_enc: string | null;
  code_verifier_enc: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  consumed_at: Timestamp | null;
}
export type ProviderStateRow = Selectable<ProviderStatesTable>;

declare module '../db/types.js' {
  interface Database {
    provider_states: ProviderStatesTable;
  }
}

declare module '../modules/users/users.queries.js' {
  interface OAuthLinksTable {
    /** The brand whose credentials issued the link's provider tokens (revocation uses them). */
    brand_id: string | null;
  }
}

export async function insertProviderState(
  db: Executor,
  row: Omit<ProviderStateRow, 'consumed_at'>,
): Promise<void> {
  await db.insertInto('provider_states').values(row).execute();
}

/**
 * Redeems a state once: the caller that gets the row continues, every other (a replay, a second
 * tab, a late return after the interaction expired) gets null. The brand's callback id in the path
 * must be the one the state was made for.
 */
export async function consumeProviderState(
  db: Executor,
  input: { stateHash: string; provider: string; oauthCallbackId: string; now: Date },
): Promise<ProviderStateRow | null> {
  const row = await db
    .updateTable('provider_states')
    .set({ consumed_at: input.now })
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
    .returningAll()
    .executeTakeFirst();
  return row ?? null;
}

export async function deleteExpiredProviderStates(db: Executor, now: Date): Promise<number> {
  const res = await db.deleteFrom('provider_states').where('expires_at', '<', now).executeTakeFirst();
  return Number(res.numDeletedRows ?? 0);
}
